package comlrl.trainers.reinforce;

import comlrl.utils.ConfigName;

/**
 * {@code credit}: how the returns of a node's joint actions become agent i's advantages.
 * <ul>
 *   <li>{@link #SHARED} (the default, the reference's): agent i's completion k is credited with the sum
 *       of the returns of the joint actions that contain it, {@code R_i[k] = Σ_{j : j_i = k} R_j}
 *       ({@link comlrl.rl.JointMode#perAgentReturns}), and its group of G is baselined and scaled as one.</li>
 *   <li>{@link #COUNTERFACTUAL} (COMA-style, {@code joint_mode: cross} only): each context c (one fixed
 *       choice of the other agents' completions) is its own group of the G joint actions that vary only
 *       agent i's completion; the advantage is baselined and scaled within the context, then averaged
 *       over the contexts ({@link MAGRPOLoss#advantages(java.util.List, MAGRPOConfig)}).</li>
 * </ul>
 */
public enum Credit implements ConfigName {
    SHARED, COUNTERFACTUAL;

    /** Parses a config value (case and blanks ignored; null = shared); an unknown one fails. */
    public static Credit parse(String value) {
        return comlrl.utils.ConfigNames.parse("credit", value, SHARED, values(), Credit::configName, "");
    }

    @Override
    public String toString() {
        return configName();
    }
}
