package comlrl.env;

import comlrl.data.TaskItem;
import comlrl.reward.CodePrograms;
import comlrl.reward.CodeReward;
import comlrl.trainers.ExternalTransition;
import comlrl.trainers.TransitionContext;
import java.util.List;
import java.util.Objects;

/**
 * CoMLRL's {@code level_feedback} for the code environment, as a Java {@link ExternalTransition}: after a
 * turn, each agent's next prompt is the task, its own previous code and what the code reward found about
 * the pair: which functions are defined, whether the program parses, how many asserts passed and the first
 * failing one (its source and error, as the sandbox reports it), and for the main agent how it used aux.
 * The program is not run again: the reward's sandbox answers from its cache when the reward scored the
 * same pair. Use it with a multi-turn trainer ({@code num_turns: 2}):
 * <pre>{@code
 * CodeReward reward = CodeReward.fromConfig(Map.of("type", "code"));
 * ExternalTransition feedback = new CodeLevelFeedback(reward);   // .externalTransition(feedback) on a builder
 * }</pre>
 */
public final class CodeLevelFeedback implements ExternalTransition {
    private final CodeReward reward;

    public CodeLevelFeedback(CodeReward reward) {
        this.reward = Objects.requireNonNull(reward, "reward");
    }

    @Override
    public List<String> next(TransitionContext context) {
        if (context.numAgents() != 2 || context.agentCompletions().size() != 2) {
            throw new IllegalArgumentException("code level_feedback needs 2 agents (aux helper, main function), got "
                    + context.numAgents());
        }
        String aux = context.agentCompletions().get(0);
        String main = context.agentCompletions().get(1);
        TaskItem item = context.item();
        CodeReward.Breakdown b = reward.breakdowns(List.of(List.of(aux), List.of(main)), List.of(item)).get(0);
        String entryPoint = CodePrograms.entryPoint(item);
        String auxFunction = CodePrograms.function(aux, CodePrograms.AUX);
        boolean auxDefined = CodePrograms.hasReturn(auxFunction);
        String diagnostics = diagnostics(b, auxDefined, entryPoint);
        String task = context.prompt() == null ? "" : context.prompt();
        String auxPrompt = "Problem:\n" + task + "\n\nYour helper function aux from the last turn:\n" + aux + "\n\n"
                + diagnostics + "\nRevise aux(...) accordingly. Reply with the code of aux only.";
        String usage = "";
        if (b.levelsPassed() > 0) {
            String mainFunction = CodePrograms.function(main, entryPoint);
            String target = mainFunction.isEmpty() ? main : mainFunction;
            usage = !CodePrograms.usesAux(target) ? "- aux: your function does not call it\n"
                    : CodePrograms.ignoresAux(target) ? "- aux: called, but its value is dropped\n"
                    : CodePrograms.isWrapper(target) ? "- aux: your function only returns its value\n"
                    : "- aux: called and its value used\n";
        }
        String mainPrompt = "Problem:\n" + task + "\n\nYour function " + entryPoint + " from the last turn:\n" + main
                + "\n\n" + diagnostics + usage + "\nRevise " + entryPoint
                + "(...) accordingly. Reply with its code only; do not define aux.";
        return List.of(auxPrompt, mainPrompt);
    }

    /** The levels the pair reached, one line each. */
    static String diagnostics(CodeReward.Breakdown b, boolean auxDefined, String entryPoint) {
        StringBuilder d = new StringBuilder("What the checks found:\n");
        d.append("- aux: ").append(auxDefined ? "defined" : "not defined with a return statement").append('\n');
        d.append("- ").append(entryPoint).append(": ")
                .append(b.levelsPassed() > 0 ? "defined" : "not defined with a return statement").append('\n');
        if (b.levelsPassed() == 0) {
            return d.toString();
        }
        if (b.levelsPassed() == 1) {
            return d.append("- syntax: error: ").append(b.message()).append('\n').toString();
        }
        d.append("- syntax: ok\n");
        d.append("- tests: ").append(b.testsPassed()).append(" of ").append(b.testsTotal()).append(" passed");
        if (b.status() != null && b.status() != comlrl.sandbox.Status.OK) {
            d.append(" (the run ended with ").append(b.status().key()).append(')');
        }
        d.append('\n');
        if (!b.message().isEmpty()) {
            d.append("- first failure: ").append(b.message()).append('\n');
        }
        return d.toString();
    }
}
