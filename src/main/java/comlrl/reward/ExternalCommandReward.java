package comlrl.reward;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import comlrl.data.TaskItem;
import comlrl.utils.JsonLinesProcess;
import comlrl.utils.JsonLinesProcess.ExternalProcessException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A reward computed by a long-lived child process (config {@code type: command}), so rewards can be
 * written in any language, e.g. {@code [python3, reward.py]}. The process transport (start,
 * timeout, stderr tail, kill) is {@link JsonLinesProcess}; this class only writes requests and
 * reads rewards.
 *
 * <p><b>Protocol</b> (JSON lines, UTF-8). The process is started on the first call and kept alive.
 * For each call it receives one line on stdin:
 * <pre>{"batch_items": [{...task item...}], "agent_completions": [["a0 c0", "a0 c1"], ["a1 c0", "a1 c1"]], "num_agents": 2}</pre>
 * and must answer with one line on stdout, flushed: either a JSON array of numbers
 * {@code [1.0, 0.5]} or an object {@code {"rewards": [1.0, 0.5]}} (NaN/Infinity as Python's
 * {@code json} writes them are accepted). An element may also be a list of num_agents numbers, the
 * per-agent rewards of that joint response ({@code [[1.0, 0.0], 0.5]}: agent 0 gets 1 and agent 1 gets 0
 * for joint response 0, both 0.5 for joint response 1); see {@link AgentRewardFunction} for who uses
 * them (the MAGRPO family) and what everyone else sees (their mean). Blank lines are skipped; stdout
 * is reserved for replies, so the process should log to stderr. Its environment gets
 * {@code PYTHONUNBUFFERED=1}. When stdin closes (end of input: training ended), the process should
 * exit; after 2 s it is killed.
 *
 * <p><b>Lifetime.</b> The process cannot outlive the JVM: it is killed (with its descendants) when
 * the JVM exits, is stopped by a signal, or is killed outright ({@code kill -9}); see
 * {@link JsonLinesProcess}. A program launched through the command should likewise end with it.
 *
 * <pre>{@code
 * # reward.py
 * import json, sys
 * for line in sys.stdin:
 *     req = json.loads(line)
 *     briefs, detaileds = req["agent_completions"]
 *     print(json.dumps([float(len(d) > len(b)) for b, d in zip(briefs, detaileds)]), flush=True)
 * }</pre>
 *
 * <p><b>Failures.</b> No reply within the timeout (default 60 s), the process exiting, unreadable
 * output or a failed start throw a {@link RewardFunctionException} naming the command, the working
 * directory and the last ~20 lines of the process's stderr; the process (and its children) is
 * killed (a grandchild forked in the very instant of the kill can escape it). The reward is then
 * unusable: later calls fail at once, without a restart, so a broken
 * reward cannot silently skew training. Calls are serialised ({@code synchronized}).
 *
 * <p>Close it (try-with-resources) when done: stdin is closed, the process gets 2 s to exit, then it
 * is destroyed.
 */
public final class ExternalCommandReward implements AgentRewardFunction, AutoCloseable {
    /** Default time to wait for one reply. */
    public static final Duration DEFAULT_TIMEOUT = JsonLinesProcess.DEFAULT_TIMEOUT;
    /** How many of the last stderr lines are kept for error messages. */
    public static final int STDERR_TAIL_LINES = JsonLinesProcess.STDERR_TAIL_LINES;

    private static final JsonMapper JSON = JsonMapper.builder()
            .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
            .build();

    private final JsonLinesProcess process;

    private ExternalCommandReward(JsonLinesProcess process) {
        this.process = process;
    }

    /** A builder for {@code command} (program and arguments, not split by a shell). */
    public static JsonLinesProcess.Builder<ExternalCommandReward> builder(List<String> command) {
        return JsonLinesProcess.builder("reward", command, ExternalCommandReward::new);
    }

    /** A reward running {@code command} with the defaults (current directory, 60 s timeout). */
    public static ExternalCommandReward of(String... command) {
        return builder(List.of(command)).build();
    }

    /** Each reply element as a vector: a number → {@code [v]} (team reward), a list → its numbers. */
    @Override
    public synchronized List<double[]> scorePerAgent(List<List<String>> agentCompletions, List<TaskItem> batchItems) {
        String request = request(agentCompletions, batchItems);
        try {
            return parse(process.call(request));
        } catch (ExternalProcessException e) {
            throw new RewardFunctionException(e.getMessage(), e);
        }
    }

    /** Whether the child process is running (false before the first call and after close or a failure). */
    public boolean isRunning() {
        return process.isRunning();
    }

    /** The command, as given. */
    public List<String> command() {
        return process.command();
    }

    /** Closes stdin, gives the process 2 s to exit, then destroys it (and its children). Idempotent. */
    @Override
    public void close() {
        process.close();
    }

    @Override
    public String toString() {
        return "ExternalCommandReward" + process.command();
    }

    private String request(List<List<String>> agentCompletions, List<TaskItem> batchItems) {
        List<Map<String, Object>> items = new ArrayList<>(batchItems.size());
        for (TaskItem item : batchItems) {
            items.add(item.asMap());
        }
        Map<String, Object> request = new LinkedHashMap<>();
        request.put("batch_items", items);
        request.put("agent_completions", agentCompletions);
        request.put("num_agents", agentCompletions.size());
        try {
            return JSON.writeValueAsString(request);
        } catch (JsonProcessingException e) {
            throw new RewardFunctionException("Could not write the reward request as JSON for " + process.command()
                    + ": " + e.getOriginalMessage(), e);
        }
    }

    /** The rewards in {@code reply}; a malformed reply fails the process (see {@link JsonLinesProcess#fail}). */
    private List<double[]> parse(String reply) {
        JsonNode node;
        try {
            node = JSON.readTree(reply);
        } catch (JsonProcessingException e) {
            throw process.fail(malformed(reply, "it is not JSON"));
        }
        JsonNode array = node;
        if (node != null && node.isObject()) {
            array = node.get("rewards");
        }
        if (array == null || !array.isArray()) {
            throw process.fail(malformed(reply, "it is neither an array nor an object with a \"rewards\" array"));
        }
        List<double[]> rewards = new ArrayList<>(array.size());
        for (int k = 0; k < array.size(); k++) {
            JsonNode value = array.get(k);
            if (value.isNumber()) {
                rewards.add(new double[] {value.doubleValue()});
                continue;
            }
            if (!value.isArray() || value.isEmpty()) {
                throw process.fail(malformed(reply, "element " + k
                        + " is neither a number nor a non-empty list of numbers"));
            }
            double[] row = new double[value.size()];
            for (int i = 0; i < row.length; i++) {
                if (!value.get(i).isNumber()) {
                    throw process.fail(malformed(reply, "element " + k + "[" + i + "] is not a number"));
                }
                row[i] = value.get(i).doubleValue();
            }
            rewards.add(row);
        }
        return rewards;
    }

    private static String malformed(String reply, String problem) {
        return "replied with malformed output (" + problem + "): " + JsonLinesProcess.shorten(reply)
                + "; expected one JSON line: an array of numbers or {\"rewards\": [...]} (an element may be a list "
                + "of per-agent numbers)";
    }

}
