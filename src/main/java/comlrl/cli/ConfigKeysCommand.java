package comlrl.cli;

import comlrl.trainers.Algorithms;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code config-keys [ALGORITHM]}: every key a run config takes, with its meaning, type, default and
 * allowed values, from the same declarations as {@code docs/CONFIG.md} ({@link ConfigDocs#keysText}).
 */
@Command(name = "config-keys", mixinStandardHelpOptions = true,
        description = "List every run-config key with its meaning, type, default and allowed values.")
final class ConfigKeysCommand implements Callable<Integer> {
    @Parameters(index = "0", arity = "0..1", paramLabel = "ALGORITHM",
            description = "only this algorithm's args: keys (magrpo, iac, madpo_iter, ...)")
    String algorithm;

    @Override
    public Integer call() {
        System.out.print(ConfigDocs.keysText(algorithm == null ? null : Algorithms.parse(algorithm)));
        return 0;
    }
}
