package comlrl.model;

/**
 * Rotary-embedding frequency scaling from {@code config.json}'s {@code rope_scaling}.
 *
 * @param type "default", "linear" or "llama3"
 * @param factor frequency divisor (linear, llama3)
 * @param lowFreqFactor llama3 only
 * @param highFreqFactor llama3 only
 * @param originalMaxPositionEmbeddings llama3 only: the pre-training context length
 */
public record RopeScaling(String type, double factor, double lowFreqFactor, double highFreqFactor,
        int originalMaxPositionEmbeddings) {

    public static final RopeScaling NONE = new RopeScaling("default", 1.0, 0, 0, 0);

    /**
     * The inverse frequencies {@code inv_freq[j] = 1 / theta^(2j / D)}, j = 0..D/2-1, scaled:
     * <pre>
     * linear:  inv_freq / factor
     * llama3:  wavelen = 2π / inv_freq
     *          low  = original / low_freq_factor,  high = original / high_freq_factor
     *          wavelen > low   → inv_freq / factor
     *          wavelen &lt; high  → inv_freq
     *          otherwise       → (1 − s)·inv_freq/factor + s·inv_freq,
     *                             s = (original / wavelen − low_freq_factor) / (high_freq_factor − low_freq_factor)
     * </pre>
     * Computed in float32 like Hugging Face (the exponent {@code 2j/D} is formed in float32).
     */
    public float[] inverseFrequencies(int headDim, double theta) {
        float[] inv = new float[headDim / 2];
        for (int j = 0; j < inv.length; j++) {
            float exponent = (float) (2 * j) / (float) headDim;
            inv[j] = 1.0f / (float) Math.pow((float) theta, exponent);
        }
        switch (type) {
            case "default":
                return inv;
            case "linear":
                for (int j = 0; j < inv.length; j++) {
                    inv[j] = inv[j] / (float) factor;
                }
                return inv;
            case "llama3": {
                float lowWavelen = (float) (originalMaxPositionEmbeddings / lowFreqFactor);
                float highWavelen = (float) (originalMaxPositionEmbeddings / highFreqFactor);
                for (int j = 0; j < inv.length; j++) {
                    float wavelen = (float) (2 * Math.PI) / inv[j];
                    float scaled = wavelen > lowWavelen ? inv[j] / (float) factor : inv[j];
                    boolean medium = !(wavelen < highWavelen) && !(wavelen > lowWavelen);
                    if (medium) {
                        float smooth = (float) ((originalMaxPositionEmbeddings / wavelen - lowFreqFactor)
                                / (highFreqFactor - lowFreqFactor));
                        scaled = (1 - smooth) * scaled / (float) factor + smooth * scaled;
                    }
                    inv[j] = scaled;
                }
                return inv;
            }
            default:
                throw new IllegalStateException("unreachable rope type " + type);
        }
    }
}
