package comlrl.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A reward command for tests ({@code reward: {type: command, run: [java, -cp, ..., RecordingReward, FILE]}}):
 * appends {@code <completions per agent> <item id>} for every call to FILE and rewards each joint
 * completion 0.5.
 */
public final class RecordingReward {
    private RecordingReward() {
    }

    public static void main(String[] args) throws Exception {
        ObjectMapper json = new ObjectMapper();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            JsonNode call = json.readTree(line);
            int k = call.get("agent_completions").get(0).size();
            StringBuilder seen = new StringBuilder();
            for (JsonNode item : call.get("batch_items")) {
                seen.append(k).append(" ").append(item.path("id").asText()).append('\n');
            }
            Files.writeString(Path.of(args[0]), seen, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            StringBuilder rewards = new StringBuilder("[");
            for (int i = 0; i < k; i++) {
                rewards.append(i == 0 ? "" : ", ").append("0.5");
            }
            System.out.println(rewards.append(']'));
            System.out.flush();
        }
    }
}
