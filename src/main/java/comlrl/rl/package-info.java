/**
 * Pure math shared by the trainers, on plain {@code double[]}: group baselines and advantage
 * normalisation ({@link comlrl.rl.AdvantageMode}, {@link comlrl.rl.Advantages}), rollout-tree
 * returns ({@link comlrl.rl.RolloutNode}, {@link comlrl.rl.TreeReturns}, {@link comlrl.rl.JointMode}),
 * the k3 reference-KL estimator and reward shaping ({@link comlrl.rl.ReferenceKl}), env_step
 * accounting ({@link comlrl.rl.EnvSteps}), the training-log gate ({@link comlrl.rl.TrainLogGate}),
 * the evaluation schedule ({@link comlrl.rl.EvalSchedule}), DAPO's dynamic-sampling rule
 * ({@link comlrl.rl.DynamicSampling}), which ordered pairs of candidates become
 * preference pairs ({@link comlrl.rl.PairSelection}) and which stored pairs the iterative trainers replay
 * ({@link comlrl.rl.ReplaySampling}, {@link comlrl.rl.ReplayMode}).
 *
 * <p>Nothing here touches tensors, models or I/O; every function states its formula in Javadoc and
 * has a hand-worked golden test. Array shapes use the house letters: {@code G} generations per agent
 * and node, {@code N} agents, {@code K} joint actions per node.
 */
package comlrl.rl;
