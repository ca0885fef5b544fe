package comlrl.trainers;

import java.util.List;

/**
 * Multi-turn environment step: given one branch's previous turn, returns the next prompt of each
 * agent (exactly {@code numAgents} of them). Extra parameters are bound by closure.
 */
@FunctionalInterface
public interface ExternalTransition {
    List<String> next(TransitionContext context);
}
