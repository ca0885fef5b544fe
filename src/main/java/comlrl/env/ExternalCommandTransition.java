package comlrl.env;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import comlrl.trainers.ExternalTransition;
import comlrl.trainers.TransitionContext;
import comlrl.utils.ConfigMaps;
import comlrl.utils.JsonLinesProcess;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;

/**
 * A multi-turn transition computed by a long-lived child process (config
 * {@code external_transition: {type: command, run: [python3, next.py]}}), so the environment can be
 * written in any language. The process transport (lazy start, timeout, stderr tail, kill, no restart
 * after a failure) is {@link JsonLinesProcess}; this class only writes requests and reads prompts.
 *
 * <p><b>Protocol</b> (JSON lines, UTF-8). For each call (one per tree branch and turn) the process
 * receives one line on stdin, the {@link TransitionContext} in the reference's keyword names:
 * <pre>{"prompt": "...", "agent_completions": ["a0", "a1"], "num_agents": 2,
 *  "prompt_history_per_agent": [["p0"], ["p1"]], "response_history_per_agent": [["a0"], ["a1"]],
 *  "batch_item": {...task item...}}</pre>
 * (on one line) and must answer with one line on stdout, flushed: a JSON array of strings, the next
 * prompt of each agent {@code ["Improve: a0", "Improve: a1"]}, or an object
 * {@code {"prompts": [...]}}. Anything else fails the transition with the command and the reply in
 * the message; the count is checked by the trainer ("External transition must return per-agent
 * prompts"). Blank lines are skipped; the process should log to stderr and exit when stdin closes
 * (end of input: training ended; after 2 s it is killed). It cannot outlive the JVM: it is killed
 * (with its descendants) when the JVM exits, is stopped by a signal or is killed outright
 * ({@code kill -9}); see {@link JsonLinesProcess}.
 *
 * <pre>{@code
 * # next.py
 * import json, sys
 * for line in sys.stdin:
 *     req = json.loads(line)
 *     print(json.dumps(["Improve: " + c for c in req["agent_completions"]]), flush=True)
 * }</pre>
 *
 * <p><b>Failures</b> throw {@link JsonLinesProcess.ExternalProcessException} naming the command, the
 * working directory, the exit code and the last stderr lines; the transition is unusable afterwards.
 * Close it (try-with-resources) when training ends.
 */
public final class ExternalCommandTransition implements ExternalTransition, AutoCloseable {
    /** Default time to wait for one reply. */
    public static final Duration DEFAULT_TIMEOUT = JsonLinesProcess.DEFAULT_TIMEOUT;

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final List<String> TYPES = List.of("command");

    private final JsonLinesProcess process;

    private ExternalCommandTransition(JsonLinesProcess process) {
        this.process = process;
    }

    /** A builder for {@code command} (program and arguments, not split by a shell). */
    public static JsonLinesProcess.Builder<ExternalCommandTransition> builder(List<String> command) {
        return JsonLinesProcess.builder("external transition", command, ExternalCommandTransition::new);
    }

    /** A transition running {@code command} with the defaults (current directory, 60 s timeout). */
    public static ExternalCommandTransition of(String... command) {
        return builder(List.of(command)).build();
    }

    /**
     * A transition from a config-file map, validated (the process starts on the first call):
     * {@code {type: command, run: [python3, next.py], working_dir: ., timeout_s: 60}}; see
     * {@link JsonLinesProcess.CommandConfig#fromMap} (the program and a script argument must
     * exist).
     *
     * @param baseDirectory directory relative paths are resolved against; null = the current directory
     * @param stderrSink receives the process's stderr lines (the command line prints them)
     */
    public static ExternalCommandTransition fromConfig(Map<String, ?> spec, Path baseDirectory,
            Consumer<String> stderrSink) {
        Map<String, Object> map = ConfigMaps.stringKeys("external_transition", spec);
        Object typeValue = map.get("type");
        if (!(typeValue instanceof String typeName)) {
            throw new IllegalArgumentException("external_transition needs a 'type': one of " + TYPES
                    + ", e.g. {type: command, run: [python3, next.py]}; got " + spec);
        }
        String type = typeName.trim().toLowerCase(Locale.ROOT);
        if (!TYPES.contains(type)) {
            throw new IllegalArgumentException("Unknown external_transition type '" + typeName + "'; valid types: "
                    + TYPES + " (a function in Java code is passed to the trainer builder instead)");
        }
        JsonLinesProcess.CommandConfig command = JsonLinesProcess.CommandConfig.fromMap("external_transition command",
                map, baseDirectory, "[python3, next.py]");
        return builder(command.run())
                .workingDirectory(command.workingDirectory())
                .timeout(command.timeout())
                .stderrSink(stderrSink)
                .build();
    }

    /**
     * Sends the context as one JSON line and returns the process's prompts (not checked to be
     * {@code numAgents} of them: the trainer does that).
     *
     * @throws JsonLinesProcess.ExternalProcessException the process failed or replied with something
     *     other than an array of strings or {@code {"prompts": [...]}}
     */
    @Override
    public synchronized List<String> next(TransitionContext context) {
        return parse(process.call(request(context)));
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
        return "ExternalCommandTransition" + process.command();
    }

    private String request(TransitionContext context) {
        Map<String, Object> request = new LinkedHashMap<>();
        request.put("prompt", context.prompt());
        request.put("agent_completions", context.agentCompletions());
        request.put("num_agents", context.numAgents());
        request.put("prompt_history_per_agent", context.promptHistoryPerAgent());
        request.put("response_history_per_agent", context.responseHistoryPerAgent());
        request.put("batch_item", context.item() == null ? null : context.item().asMap());
        try {
            return JSON.writeValueAsString(request);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("Could not write the external transition request as JSON for "
                    + process.command() + ": " + e.getOriginalMessage(), e);
        }
    }

    /** The prompts in {@code reply}; a malformed reply fails the process (see {@link JsonLinesProcess#fail}). */
    private List<String> parse(String reply) {
        JsonNode node;
        try {
            node = JSON.readTree(reply);
        } catch (JsonProcessingException e) {
            throw process.fail(malformed(reply, "it is not JSON"));
        }
        JsonNode array = node != null && node.isObject() ? node.get("prompts") : node;
        if (array == null || !array.isArray()) {
            throw process.fail(malformed(reply, "it is neither an array nor an object with a \"prompts\" array"));
        }
        List<String> prompts = new ArrayList<>(array.size());
        for (int i = 0; i < array.size(); i++) {
            JsonNode value = array.get(i);
            if (!value.isTextual()) {
                throw process.fail(malformed(reply, "element " + i + " is not a string"));
            }
            prompts.add(value.asText());
        }
        return List.copyOf(prompts);
    }

    private static String malformed(String reply, String problem) {
        return "replied with malformed output (" + problem + "): " + JsonLinesProcess.shorten(reply)
                + "; expected one JSON line: an array of strings (one next prompt per agent) or {\"prompts\": [...]}";
    }
}
