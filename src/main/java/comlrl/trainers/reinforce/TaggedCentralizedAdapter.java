package comlrl.trainers.reinforce;

import comlrl.data.TaskItem;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The default centralized adapter (the reference's tagged adapter): the joint prompt lists each
 * role's original prompt and asks for one {@code <agent_i>...</agent_i>} section per role
 * (1-based); parsing takes each section's text (case-insensitive, across lines), {@code ""} for a
 * missing section, and fails when the completion holds no section at all.
 */
public final class TaggedCentralizedAdapter implements CentralizedAdapter {

    @Override
    public String buildPrompt(TaskItem item, List<String> agentPrompts) {
        StringBuilder b = new StringBuilder("You coordinate ").append(agentPrompts.size())
                .append(" agents. Write every agent's response yourself.\n\n");
        for (int i = 0; i < agentPrompts.size(); i++) {
            b.append("Agent ").append(i + 1).append(" original prompt:\n").append(agentPrompts.get(i)).append("\n\n");
        }
        b.append("Answer with one section per agent, in order:\n");
        for (int i = 0; i < agentPrompts.size(); i++) {
            b.append("<agent_").append(i + 1).append(">...</agent_").append(i + 1).append(">\n");
        }
        return b.toString();
    }

    /** @throws IllegalArgumentException when the completion holds no {@code <agent_i>} section at all */
    @Override
    public List<String> parseCompletion(String completion, TaskItem item, int numAgents) {
        List<String> out = new ArrayList<>();
        boolean any = false;
        for (int i = 1; i <= numAgents; i++) {
            Matcher m = Pattern.compile("<agent_" + i + ">(.*?)</agent_" + i + ">",
                    Pattern.CASE_INSENSITIVE | Pattern.DOTALL).matcher(completion);
            if (m.find()) {
                out.add(m.group(1).strip());
                any = true;
            } else {
                out.add("");
            }
        }
        if (!any) {
            throw new IllegalArgumentException("No <agent_i> section in the centralized completion");
        }
        return out;
    }
}
