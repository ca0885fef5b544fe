package comlrl.model.io;

/**
 * The kind of a Hugging Face hub repository, which decides where its files live on the hub and in
 * the cache (the layout {@code huggingface_hub} uses):
 * <pre>
 * kind     cache folder              file URL                                  API (file list)
 * model    models--org--name/        {endpoint}/org/name/resolve/{rev}/{file}   /api/models/org/name/revision/{rev}
 * dataset  datasets--org--name/      {endpoint}/datasets/org/name/resolve/...  /api/datasets/org/name/revision/{rev}
 * </pre>
 * In URLs the revision is one percent-encoded path segment ({@code refs/convert/parquet} becomes
 * {@code refs%2Fconvert%2Fparquet}).
 */
public enum HubRepoType {
    /** A model repository: weights, configs, tokenizer. */
    MODEL("model", "models", "", "Qwen/Qwen2.5-0.5B"),
    /** A dataset repository: data files (Parquet, JSON, CSV...) and a README whose YAML may declare configs. */
    DATASET("dataset", "datasets", "datasets/", "openai/gsm8k");

    private final String noun;
    private final String plural;
    private final String urlPrefix;
    private final String exampleId;

    HubRepoType(String noun, String plural, String urlPrefix, String exampleId) {
        this.noun = noun;
        this.plural = plural;
        this.urlPrefix = urlPrefix;
        this.exampleId = exampleId;
    }

    /** "model" or "dataset", for messages. */
    public String noun() {
        return noun;
    }

    /** The cache folder's name for {@code repoId}: {@code models--org--name}, {@code datasets--org--name}. */
    String folderName(String repoId) {
        return plural + "--" + repoId.replace("/", "--");
    }

    /** What goes between the endpoint and the repository id in file URLs: "" or "datasets/". */
    String urlPrefix() {
        return urlPrefix;
    }

    /** The API path of a revision's metadata, without the endpoint: {@code /api/datasets/org/name/revision/main}. */
    String apiRevisionPath(String encodedRepoId, String encodedRevision) {
        return "/api/" + plural + "/" + encodedRepoId + "/revision/" + encodedRevision;
    }

    /** A valid id of this kind, for messages. */
    String exampleId() {
        return exampleId;
    }
}
