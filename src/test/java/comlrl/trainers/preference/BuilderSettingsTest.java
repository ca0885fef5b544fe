package comlrl.trainers.preference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.data.Dataset;
import comlrl.data.TaskItem;
import comlrl.distributed.DistributedContext;
import comlrl.logging.MetricSink;
import comlrl.model.LoraConfig;
import comlrl.reward.RewardFunction;
import comlrl.tensor.DType;
import comlrl.tokenizer.Tokenizer;
import comlrl.trainers.EvalAggregator;
import comlrl.trainers.EvalLogger;
import comlrl.trainers.ExternalTransition;
import comlrl.trainers.actorcritic.ActorCriticTrainerBase;
import comlrl.trainers.actorcritic.IACConfig;
import comlrl.trainers.actorcritic.IACTrainer;
import comlrl.trainers.actorcritic.MAACConfig;
import comlrl.trainers.actorcritic.MAACTrainer;
import comlrl.logging.MetricsLogger;
import comlrl.trainers.common.TrainerBuilder;
import comlrl.checkpoint.TrainerCheckpoint;
import comlrl.trainers.common.TrainerSettings;
import comlrl.trainers.common.TrainerSettings.Key;
import comlrl.trainers.reinforce.CentralizedAdapter;
import comlrl.trainers.reinforce.CentralizedMAGRPOConfig;
import comlrl.trainers.reinforce.CentralizedMAGRPOTrainer;
import comlrl.trainers.reinforce.Centralization;
import comlrl.trainers.reinforce.MAGRPOConfig;
import comlrl.trainers.reinforce.MAGRPOTrainer;
import comlrl.utils.Formatter;
import comlrl.utils.RewardProcessor;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every setting a trainer's builder takes reaches the trainer of every family, and the stage trainers
 * built inside it (MARLHF's RL stage, MADPOIter's DPO trainer, MARLHFIter's MARLHF), or is refused
 * with a message naming it. Each builder's public setters are found by reflection and every one is
 * called with a non-default value ({@link #VALUES}; a new setter without a value fails the test), the
 * trainer is built (tiny models, no training) and the settings it holds ({@code settings()}) are
 * compared key by key with those given: the same object for every key, except the keys a stage or the
 * centralized wrapper replaces on purpose, whose replacements are checked one by one.
 */
class BuilderSettingsTest {
    @TempDir
    static Path tmp;
    static String agent;
    static MetricsLogger shared;

    // the non-default values, one object per setting (identity is what the checks compare)
    static final RecordingReward REWARD = new RecordingReward();
    static final RecordingReward EVAL_REWARD = new RecordingReward();
    static final RewardProcessor PROCESSOR = r -> 2 * r;
    static final RewardProcessor EVAL_PROCESSOR = r -> 3 * r;
    static final Formatter ONE_FORMATTER = item -> "One: " + item.get("prompt");
    static final List<Formatter> FORMATTERS = List.of(item -> "Brief: " + item.get("prompt"),
            item -> "Detailed: " + item.get("prompt"));
    static final RecordingLogger EVAL_LOGGER = new RecordingLogger();
    static final EvalAggregator EVAL_AGGREGATOR = (rows, turns) -> Map.of("rows", (double) rows.size());
    static final ExternalTransition TRANSITION = context -> List.of("a", "b");
    static final MetricSink SINK = (step, metrics) -> { };
    static final PrintStream CONSOLE = new PrintStream(new ByteArrayOutputStream());
    static final LoraConfig LORA = new LoraConfig(4, 8, 0.0, List.of("q_proj", "v_proj"), false);
    static final LoraConfig CRITIC_LORA = new LoraConfig(2, 4, 0.0, List.of("q_proj"), false);
    static final Map<String, Object> WANDB = Map.of("project", "settings-test");
    static final List<String> BRIDGE = List.of("true");
    static final DistributedContext PROCESSES = DistributedContext.local();
    static final TrainerCheckpoint.Extension EXTENSION = new TrainerCheckpoint.Extension("Outer", Map.of(), Map.of());
    static final CentralizedAdapter ADAPTER = new Halves();
    static final ActorCriticTrainerBase.MetricsCallback CALLBACK = rollouts -> Map.of("n", (double) rollouts.size());
    static Tokenizer tokenizer;
    static Dataset train;
    static Dataset eval;

    /**
     * Setter name → how to call it with a non-default value. Calls naming one key twice
     * ({@code formatters}, {@code tokenizer(s)}) end with the value the checks expect.
     */
    static final Map<String, Consumer<TrainerBuilder<?, ?>>> VALUES = new LinkedHashMap<>();

    @BeforeAll
    static void values() {
        MADPOTrainerTest.writeAgentsIfNeeded();
        agent = MADPOTrainerTest.agent.toString();
        tokenizer = Tokenizer.load(MADPOTrainerTest.agent);
        train = MADPOTrainerTest.tasks(2);
        eval = MADPOTrainerTest.tasks(1);
        shared = new MetricsLogger(null, List.of(), 1, 10);
        VALUES.put("agents", b -> b.agents(List.of(agent, agent)));
        VALUES.put("agentModel", b -> call(b, "agentModel", agent));
        VALUES.put("numAgents", b -> call(b, "numAgents", 2));
        VALUES.put("formatters", b -> {
            call(b, "formatters", ONE_FORMATTER);
            b.formatters(FORMATTERS);
        });
        VALUES.put("rewardFunc", b -> b.rewardFunc(REWARD));
        VALUES.put("evalRewardFunc", b -> b.evalRewardFunc(EVAL_REWARD));
        VALUES.put("rewardProcessor", b -> b.rewardProcessor(PROCESSOR));
        VALUES.put("evalRewardProcessor", b -> b.evalRewardProcessor(EVAL_PROCESSOR));
        VALUES.put("trainDataset", b -> b.trainDataset(train));
        VALUES.put("evalDataset", b -> b.evalDataset(eval));
        VALUES.put("dtype", b -> b.dtype(DType.F32));
        VALUES.put("outputDir", b -> b.outputDir(tmp.resolve("run-" + b.getClass().getSimpleName() + "-" + b.hashCode())));
        VALUES.put("verbose", b -> b.verbose(false));
        VALUES.put("chatTemplate", b -> b.chatTemplate(true, "You are terse."));
        VALUES.put("console", b -> b.console(CONSOLE));
        VALUES.put("logHistoryLimit", b -> b.logHistoryLimit(7));
        VALUES.put("metricSink", b -> b.metricSink(SINK));
        VALUES.put("sharedLogger", b -> b.sharedLogger(shared));
        VALUES.put("checkpointExtension", b -> b.checkpointExtension(EXTENSION));
        VALUES.put("wandbConfig", b -> b.wandbConfig(WANDB));
        VALUES.put("wandbBridge", b -> b.wandbBridge(BRIDGE));
        VALUES.put("tensorboard", b -> b.tensorboard(true));
        VALUES.put("recordRun", b -> b.recordRun(false));
        VALUES.put("report", b -> b.report(true));
        VALUES.put("distributed", b -> b.distributed(PROCESSES));
        VALUES.put("lora", b -> b.lora(LORA));
        VALUES.put("agentsShareBase", b -> b.agentsShareBase(true));
        VALUES.put("loraAdapters", b -> b.loraAdapters(Arrays.asList(null, null)));
        VALUES.put("mergeAdaptersOnSave", b -> b.mergeAdaptersOnSave(true));
        VALUES.put("criticLora", b -> b.criticLora(CRITIC_LORA));
        VALUES.put("externalTransition", b -> call(b, "externalTransition", TRANSITION));
        VALUES.put("evalLogger", b -> call(b, "evalLogger", EVAL_LOGGER));
        VALUES.put("evalAggregator", b -> call(b, "evalAggregator", EVAL_AGGREGATOR));
        VALUES.put("centralizedAdapter", b -> call(b, "centralizedAdapter", ADAPTER));
        VALUES.put("criticModel", b -> call(b, "criticModel", agent));
        VALUES.put("critics", b -> call(b, "critics", List.of(agent, agent)));
        VALUES.put("tokenizers", b -> {
            call(b, "tokenizer", tokenizer);
            call(b, "tokenizers", List.of(tokenizer, tokenizer));
        });
        VALUES.put("metricsCallback", b -> call(b, "metricsCallback", CALLBACK));
        VALUES.put("modelConfig", b -> call(b, "modelConfig", Map.of("torch_dtype", "float32")));
    }

    @AfterAll
    static void closeShared() {
        shared.close();
    }

    // ------------------------------------------------------------------ the families

    @Test
    void magrpoKeepsEverySettingItTakesAndRefusesTheCritics() {
        Set<String> refused = Set.of("criticLora");
        MAGRPOTrainer.Builder b = given(MAGRPOTrainer.builder().args(magrpo()), refused);
        try (MAGRPOTrainer t = b.build()) {
            assertSame(t.settings(), b.settings(), Map.of());
        }
        assertRefused(() -> MAGRPOTrainer.builder().args(magrpo()), refused);
    }

    @Test
    void centralizedMagrpoKeepsEverySettingAndWrapsTheRoles() {
        Set<String> refused = Set.of("criticLora", "externalTransition");
        CentralizedMAGRPOTrainer.Builder b = given(CentralizedMAGRPOTrainer.builder().args(centralizedMagrpo()), refused);
        b.agents(List.of(agent)).loraAdapters(Arrays.asList((Path) null)); // one actor
        try (CentralizedMAGRPOTrainer t = b.build()) {
            assertThat(t.numRoles()).isEqualTo(2);
            assertSame(t.settings(), b.settings(), replaced(TrainerSettings.FORMATTERS, null, TrainerSettings.REWARD_FUNC,
                    null, TrainerSettings.EVAL_REWARD_FUNC, null, TrainerSettings.EVAL_LOGGER, null,
                    TrainerSettings.NUM_AGENTS, 1));
            assertCentralized(t.settings());
        }
        assertRefused(() -> CentralizedMAGRPOTrainer.builder().args(centralizedMagrpo()), refused);
    }

    @Test
    void iacAndMaacKeepEverySettingTheyTakeAndRefuseCustomEvaluationMetrics() {
        Set<String> refused = Set.of("evalLogger", "evalAggregator"); // evaluation reports rewards and metrics_callback's
        ActorCriticTrainerBase.Builder<IACTrainer> iac = given(IACTrainer.builder().args(iac()), refused);
        try (IACTrainer t = iac.build()) {
            assertSame(t.settings(), iac.settings(), Map.of());
        }
        assertRefused(() -> IACTrainer.builder().args(iac()), refused);
        ActorCriticTrainerBase.Builder<MAACTrainer> maac = given(MAACTrainer.builder().args(maac()), refused);
        maac.critics(List.of(agent));
        try (MAACTrainer t = maac.build()) {
            assertSame(t.settings(), maac.settings(), Map.of());
        }
        assertRefused(() -> MAACTrainer.builder().args(maac()), refused);
        // num_agents is taken when it agrees with the config's (as MARLHF's RL stage gives it), refused otherwise
        assertThatThrownBy(() -> IACTrainer.builder().args(iac()).numAgents(3).agentModel(agent).rewardFunc(REWARD)
                .trainDataset(train).build()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("num_agents given to the builder (3) must equal args.num_agents (2)");
    }

    @Test
    void madpoKeepsEverySettingItTakesAndRefusesTheEvaluationRewardItCannotUse() {
        Set<String> refused = Set.of("evalRewardFunc", "evalRewardProcessor", "criticLora", "externalTransition");
        MADPOTrainer.Builder b = given(MADPOTrainer.builder().args(madpo()), refused);
        try (MADPOTrainer t = b.build()) {
            assertSame(t.settings(), b.settings(), Map.of());
        }
        assertRefused(() -> MADPOTrainer.builder().args(madpo()), refused);
    }

    @Test
    void marlhfAndItsRlStageKeepEverySetting() {
        Set<String> refused = Set.of("evalLogger", "evalAggregator"); // the IAC stage reports no custom eval metrics
        MARLHFTrainer.Builder b = given(MARLHFTrainer.builder().args(marlhf("iac")), refused);
        try (MARLHFTrainer t = b.build()) {
            assertSame(t.settings(), b.settings(), Map.of());
            assertRlStage(((ActorCriticTrainerBase) t.rlTrainer()).settings(), b.settings(), t, EXTENSION.algorithm());
        }
        assertRefused(() -> MARLHFTrainer.builder().args(marlhf("iac")), refused);
        // with a MAGRPO-family stage the critics are refused, the evaluation logger reaches it
        Set<String> critics = Set.of("criticModel", "critics", "tokenizers", "criticLora", "metricsCallback");
        MARLHFTrainer.Builder g = given(MARLHFTrainer.builder().args(marlhf("magrpo")), critics);
        try (MARLHFTrainer t = g.build()) {
            assertRlStage(((MAGRPOTrainer) t.rlTrainer()).settings(), g.settings(), t, EXTENSION.algorithm());
        }
        assertRefused(() -> MARLHFTrainer.builder().args(marlhf("magrpo")), critics);
    }

    @Test
    void madpoIterAndItsDpoStageKeepEverySetting() {
        Set<String> refused = Set.of("evalRewardFunc", "evalRewardProcessor", "criticLora", "checkpointExtension",
                "externalTransition");
        MADPOIterTrainer.Builder b = given(MADPOIterTrainer.builder().args(madpoIter()), refused);
        try (MADPOIterTrainer t = b.build()) {
            assertSame(t.settings(), b.settings(), Map.of());
            TrainerSettings dpo = ((MADPOTrainer) t.stage()).settings();
            // the stage writes the run's outputs and joins its processes itself: only the extension is added
            assertSame(dpo, b.settings(), Map.of(TrainerSettings.CHECKPOINT_EXTENSION,
                    dpo.get(TrainerSettings.CHECKPOINT_EXTENSION)));
            assertThat(dpo.get(TrainerSettings.CHECKPOINT_EXTENSION).algorithm()).isEqualTo(MADPOIterTrainer.ALGORITHM_NAME);
        }
        assertRefused(() -> MADPOIterTrainer.builder().args(madpoIter()), refused);
    }

    @Test
    void marlhfIterItsMarlhfAndItsRlStageKeepEverySetting() {
        Set<String> refused = Set.of("evalLogger", "evalAggregator", "checkpointExtension");
        MARLHFIterTrainer.Builder b = given(MARLHFIterTrainer.builder().args(marlhfIter()), refused);
        try (MARLHFIterTrainer t = b.build()) {
            assertSame(t.settings(), b.settings(), Map.of());
            MARLHFTrainer marlhf = (MARLHFTrainer) t.stage();
            TrainerSettings inner = marlhf.settings();
            assertSame(inner, b.settings(), Map.of(TrainerSettings.CHECKPOINT_EXTENSION,
                    inner.get(TrainerSettings.CHECKPOINT_EXTENSION)));
            assertRlStage(((ActorCriticTrainerBase) t.rlTrainer()).settings(), inner, marlhf,
                    MARLHFIterTrainer.ALGORITHM_NAME);
        }
        assertRefused(() -> MARLHFIterTrainer.builder().args(marlhfIter()), refused);
    }

    // ------------------------------------------------------------------ checks

    /**
     * The RL stage of {@code marlhf}: the MARLHF builder's settings, but for its agents' prompts and
     * count, the learned reward (raw) in training and the task reward with the evaluation processor in
     * evaluation, MARLHF's logger and processes and a checkpoint extension of {@code outer}'s algorithm.
     */
    static void assertRlStage(TrainerSettings stage, TrainerSettings given, MARLHFTrainer marlhf, String outer) {
        Map<Key<?>, Object> replaced = new LinkedHashMap<>();
        replaced.put(TrainerSettings.FORMATTERS, stage.get(TrainerSettings.FORMATTERS));
        replaced.put(TrainerSettings.REWARD_FUNC, stage.get(TrainerSettings.REWARD_FUNC));
        replaced.put(TrainerSettings.REWARD_PROCESSOR, stage.get(TrainerSettings.REWARD_PROCESSOR));
        replaced.put(TrainerSettings.DISTRIBUTED, null);
        replaced.put(TrainerSettings.SHARED_LOGGER, marlhf.logger());
        replaced.put(TrainerSettings.CHECKPOINT_EXTENSION, stage.get(TrainerSettings.CHECKPOINT_EXTENSION));
        if (given.get(TrainerSettings.CRITIC_MODEL) == null && given.get(TrainerSettings.CRITICS) == null) {
            replaced.put(TrainerSettings.CRITIC_MODEL, agent); // the first actor's model (reference §7.3)
        }
        assertSame(stage, given, replaced);
        assertThat(stage.get(TrainerSettings.REWARD_FUNC)).isNotSameAs(REWARD); // the learned reward
        assertThat(stage.get(TrainerSettings.REWARD_PROCESSOR).apply(5.0)).isEqualTo(5.0); // used raw
        assertThat(stage.get(TrainerSettings.NUM_AGENTS)).isEqualTo(2);
        assertThat(stage.get(TrainerSettings.CHECKPOINT_EXTENSION).algorithm()).isEqualTo(outer);
        // the stage's prompts are MARLHF's agents' prompts
        @SuppressWarnings("unchecked")
        List<Formatter> prompts = (List<Formatter>) stage.get(TrainerSettings.FORMATTERS);
        TaskItem item = train.get(0);
        assertThat(prompts.get(1).format(item)).isEqualTo(FORMATTERS.get(1).format(item));
    }

    /** The centralized actor's settings: one prompt from both roles', rewards and eval logger over the roles' parts. */
    static void assertCentralized(TrainerSettings actor) {
        TaskItem item = train.get(0);
        Formatter prompt = (Formatter) actor.get(TrainerSettings.FORMATTERS);
        assertThat(prompt.format(item)).isEqualTo(FORMATTERS.get(0).format(item) + " | " + FORMATTERS.get(1).format(item));
        REWARD.seen.clear();
        assertThat(actor.get(TrainerSettings.REWARD_FUNC).score(List.of(List.of("abcd", "abc")), List.of(item)))
                .hasSize(2);
        assertThat(REWARD.seen).containsExactly(List.of(List.of("ab", ""), List.of("cd", ""))); // "abc" does not parse
        EVAL_REWARD.seen.clear();
        actor.get(TrainerSettings.EVAL_REWARD_FUNC).score(List.of(List.of("wxyz")), List.of(item));
        assertThat(EVAL_REWARD.seen).containsExactly(List.of(List.of("wx"), List.of("yz")));
        // evaluation: [1][item][turn] joint completions reach the user's logger as [role][item][turn]
        EVAL_LOGGER.seen.clear();
        actor.get(TrainerSettings.EVAL_LOGGER).log(List.of(List.of(List.of("abcd"))), List.of(item), List.of("p"));
        assertThat(EVAL_LOGGER.seen).containsExactly(List.of(List.of(List.of("ab")), List.of(List.of("cd"))));
    }

    /**
     * Every key given is in {@code held} as the same object, except those in {@code replaced}, whose
     * value in {@code held} is the one mapped (a null mapping for "not the given object": the
     * centralized wrapper's functions, checked by behaviour).
     */
    static void assertSame(TrainerSettings held, TrainerSettings given, Map<Key<?>, Object> replaced) {
        List<String> wrong = new ArrayList<>();
        for (Key<?> key : given.keys()) {
            Object want = given.get(key);
            Object got = held.get(key);
            if (replaced.containsKey(key)) {
                Object expected = replaced.get(key);
                boolean ok = expected == null && want != null ? got != want : java.util.Objects.equals(got, expected);
                if (!ok) {
                    wrong.add(key + " (replaced: expected " + expected + ", got " + got + ")");
                }
            } else if (got != want && !(want instanceof Number && want.equals(got))
                    && !(want instanceof Boolean && want.equals(got))) {
                wrong.add(key + " (given " + want + ", got " + got + ")");
            }
        }
        assertThat(wrong).as("settings that did not reach the trainer").isEmpty();
    }

    /**
     * Each setting of {@code refused} alone (besides what building needs) fails the build with a
     * message naming its key.
     */
    static void assertRefused(java.util.function.Supplier<? extends TrainerBuilder<?, ?>> fresh, Set<String> refused) {
        for (String setter : refused) {
            TrainerBuilder<?, ?> b = fresh.get();
            b.agents(List.of(agent, agent)).rewardFunc(REWARD).trainDataset(train).verbose(false);
            if (b instanceof CentralizedMAGRPOTrainer.Builder) {
                b.agents(List.of(agent));
            }
            Set<Key<?>> before = b.settings().keys();
            apply(b, setter);
            Key<?> key = b.settings().keys().stream().filter(k -> !before.contains(k)).findFirst().orElseThrow();
            assertThatThrownBy(() -> build(b))
                    .as(setter).isInstanceOf(IllegalArgumentException.class).hasMessageContaining(key.name());
        }
    }

    /** {@code b.build()} (each family's build method has its own return type); a trainer built is closed. */
    static void build(TrainerBuilder<?, ?> b) throws Exception {
        Object trainer;
        try {
            trainer = b.getClass().getMethod("build").invoke(b);
        } catch (java.lang.reflect.InvocationTargetException e) {
            throw (Exception) e.getCause();
        }
        ((AutoCloseable) trainer).close();
    }

    /** Keys and their replacement values (nulls allowed), in pairs. */
    static Map<Key<?>, Object> replaced(Object... pairs) {
        Map<Key<?>, Object> out = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            out.put((Key<?>) pairs[i], pairs[i + 1]);
        }
        return out;
    }

    // ------------------------------------------------------------------ setters

    /** {@code b} with every one of its public setters called ({@link #VALUES}) but {@code skip}'s. */
    static <B extends TrainerBuilder<?, ?>> B given(B b, Set<String> skip) {
        for (String setter : setters(b.getClass())) {
            assertThat(VALUES).as("a non-default value for the setter " + setter).containsKey(setter);
            if (!skip.contains(setter)) {
                apply(b, setter);
            }
        }
        return b;
    }

    static void apply(TrainerBuilder<?, ?> b, String setter) {
        VALUES.get(setter).accept(b);
    }

    /** The names of {@code type}'s public setters: instance methods returning a builder, but args and settings. */
    static Set<String> setters(Class<?> type) {
        Set<String> names = new java.util.TreeSet<>();
        for (Method m : type.getMethods()) {
            if (!Modifier.isStatic(m.getModifiers()) && m.getParameterCount() >= 1
                    && TrainerBuilder.class.isAssignableFrom(m.getReturnType())
                    && !Set.of("args", "settings").contains(m.getName())) {
                names.add(m.getName().equals("tokenizer") ? "tokenizers" : m.getName());
            }
        }
        return names;
    }

    static void call(TrainerBuilder<?, ?> b, String name, Object value) {
        for (Method m : b.getClass().getMethods()) {
            if (m.getName().equals(name) && m.getParameterCount() == 1
                    && (m.getParameterTypes()[0].isInstance(value) || m.getParameterTypes()[0] == int.class)) {
                try {
                    m.invoke(b, value);
                    return;
                } catch (ReflectiveOperationException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
        throw new IllegalArgumentException(b.getClass().getSimpleName() + " has no setter " + name);
    }

    // ------------------------------------------------------------------ configs

    static MAGRPOConfig magrpo() {
        return MAGRPOConfig.builder().numAgents(2).numGenerations(2).maxNewTokens(4).build();
    }

    static MAGRPOConfig centralizedMagrpo() {
        return CentralizedMAGRPOConfig.builder().numAgents(2).numGenerations(2).maxNewTokens(4).build();
    }

    static IACConfig iac() {
        return IACConfig.builder().numAgents(2).numTurns(1).numGenerations(2).maxNewTokens(4).build();
    }

    static MAACConfig maac() {
        return MAACConfig.builder().numAgents(2).numTurns(1).numGenerations(2).maxNewTokens(4).build();
    }

    static MADPOConfig madpo() {
        return MADPOConfig.builder().numAgents(2).preferenceNumCandidates(2).maxNewTokens(4).build();
    }

    static MARLHFConfig marlhf(String rl) {
        return MARLHFConfig.builder().numAgents(2).preferenceNumCandidates(2).numGenerations(2).maxNewTokens(4)
                .rewardModelDevice("cpu").set("rl_algorithm", rl).build();
    }

    static MADPOIterConfig madpoIter() {
        return MADPOIterConfig.builder().numAgents(2).preferenceNumCandidates(2).maxNewTokens(4).build();
    }

    static MARLHFIterConfig marlhfIter() {
        return MARLHFIterConfig.builder().numAgents(2).preferenceNumCandidates(2).numGenerations(2).maxNewTokens(4)
                .rewardModelDevice("cpu").set("rl_algorithm", "iac").build();
    }

    // ------------------------------------------------------------------ recorders

    /** Records the role outputs it scores ({@code [agent][k]} per call); rewards 0. */
    static final class RecordingReward implements RewardFunction {
        final List<List<List<String>>> seen = new ArrayList<>();

        @Override
        public List<Double> score(List<List<String>> completions, List<TaskItem> items) {
            seen.add(completions);
            return java.util.Collections.nCopies(completions.get(0).size(), 0.0);
        }
    }

    static final class RecordingLogger implements EvalLogger {
        final List<List<List<List<String>>>> seen = new ArrayList<>();

        @Override
        public List<Map<String, Double>> log(List<List<List<String>>> completions, List<TaskItem> items,
                List<String> prompts) {
            seen.add(completions);
            return List.of(Map.of());
        }
    }

    /** Joins the roles' prompts with " | "; splits a completion of even length into its halves, else fails. */
    static final class Halves implements CentralizedAdapter {
        @Override
        public String buildPrompt(TaskItem item, List<String> agentPrompts) {
            return String.join(" | ", agentPrompts);
        }

        @Override
        public List<String> parseCompletion(String completion, TaskItem item, int numAgents) {
            if (completion.length() % 2 == 1) {
                throw new IllegalArgumentException("odd");
            }
            int half = completion.length() / 2;
            return List.of(completion.substring(0, half), completion.substring(half));
        }
    }

    /** A preference builder given no {@code args} fails naming the config it needs, before anything loads. */
    @Test
    void aPreferenceTrainerWithoutArgsFailsNamingItsConfig() {
        Map<String, org.assertj.core.api.ThrowableAssert.ThrowingCallable> builds = new LinkedHashMap<>();
        builds.put("MADPOConfig", () -> MADPOTrainer.builder().build());
        builds.put("MARLHFConfig", () -> MARLHFTrainer.builder().build());
        builds.put("MADPOIterConfig", () -> MADPOIterTrainer.builder().build());
        builds.put("MARLHFIterConfig", () -> MARLHFIterTrainer.builder().build());
        builds.forEach((config, build) -> assertThatThrownBy(build).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("args (a " + config + ") must be provided"));
    }
}
