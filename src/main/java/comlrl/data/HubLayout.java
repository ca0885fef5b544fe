package comlrl.data;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The configs and splits of a dataset repository and each split's data files, found the way
 * Hugging Face {@code datasets} finds them:
 *
 * <ol>
 *   <li><b>Declared</b>: the README's YAML header lists {@code configs:}, each with a
 *       {@code config_name}, optionally {@code default: true}, and {@code data_files} as a pattern,
 *       a list of patterns (split {@code train}), a list of {@code {split, path}} entries (path a
 *       pattern or a list of them) or a map of split to pattern(s); or only a {@code data_dir},
 *       whose files are then split by name as below. Patterns are globs relative to the
 *       repository root (or to {@code data_dir}): {@code *} and {@code ?} within one path part,
 *       {@code **} across parts, {@code [...]} a character class.
 *   <li><b>Inferred</b> from the paths, when the README declares no configs:
 *       <pre>
 *       {split}-*.parquet, {split}.parquet          config "default"
 *       data/{split}-*.parquet, data/{split}/*      config "default"
 *       {config}/{split}-*.parquet                  config {config}
 *       {config}/{split}/*.parquet                  config {config} ({split} may be "partial-{split}",
 *                                                   as in the hub's conversion of large datasets)
 *       {split}/0000.parquet (numbered file names)   config "default"
 *       </pre>
 *       where {@code {split}} is the file name up to its first {@code -} or {@code .}.
 * </ol>
 * Hidden files and folders (names starting with {@code .} or {@code __}) are never data.
 */
final class HubLayout {
    /** The config of a dataset that declares none. */
    static final String DEFAULT_CONFIG = "default";

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    private static final Pattern DATA_FILE = Pattern.compile(
            ".*\\.(parquet|arrow|csv|tsv|json|jsonl|ndjson|txt|xml|zip|tar|tgz)(\\.(gz|bz2|xz|zst|lz4))?");
    private static final Pattern NUMBERED = Pattern.compile("[0-9]+");

    /** config -> split -> files (repository paths), in order. */
    private final Map<String, Map<String, List<String>>> configs;
    /** The config the README marks {@code default: true}, or null. */
    private final String defaultConfig;

    private HubLayout(Map<String, Map<String, List<String>>> configs, String defaultConfig) {
        this.configs = configs;
        this.defaultConfig = defaultConfig;
    }

    /**
     * The layout of a repository holding {@code files}: declared by {@code readme}'s YAML header
     * when it has {@code configs:}, else inferred from the data files' paths.
     *
     * @param readme the README's text, or null when there is none
     * @throws DatasetException when the YAML header is malformed
     */
    static HubLayout of(List<String> files, String readme) {
        List<?> declaredConfigs = readme == null ? null : yamlConfigs(readme);
        if (declaredConfigs != null && !declaredConfigs.isEmpty()) {
            return declared(declaredConfigs, files);
        }
        return inferred(files.stream().filter(HubLayout::isDataFile).toList());
    }

    /** The layout inferred from the Parquet files among {@code files} (as on a conversion branch). */
    static HubLayout ofParquet(List<String> files) {
        return inferred(files.stream().filter(f -> isDataFile(f) && isParquet(f)).toList());
    }

    static boolean isParquet(String path) {
        return path.toLowerCase(Locale.ROOT).endsWith(".parquet");
    }

    private static boolean isDataFile(String path) {
        for (String part : path.split("/")) {
            if (part.startsWith(".") || part.startsWith("__")) {
                return false;
            }
        }
        return DATA_FILE.matcher(path.toLowerCase(Locale.ROOT)).matches();
    }

    // ---------------------------------------------------------------- queries

    /** Whether no config has any data file. */
    boolean isEmpty() {
        return configs.values().stream().allMatch(splits -> splits.values().stream().allMatch(List::isEmpty));
    }

    /** Whether some data file is not Parquet (JSON, CSV, ...). */
    boolean hasOtherFormats() {
        return allFiles().stream().anyMatch(f -> !isParquet(f));
    }

    /** Every data file, each once. */
    List<String> allFiles() {
        Set<String> all = new LinkedHashSet<>();
        configs.values().forEach(splits -> splits.values().forEach(all::addAll));
        return List.copyOf(all);
    }

    /** The files of {@code split} of {@code config}, or null when either does not exist. */
    List<String> find(String config, String split) {
        Map<String, List<String>> splits = configs.get(config);
        return splits == null ? null : splits.get(split);
    }

    /**
     * The config to read: {@code requested} when given, else the one marked {@code default: true},
     * the only one, or the one named "default".
     *
     * @param dataset names the dataset in messages
     * @throws DatasetException naming the configs (and their splits) that exist
     */
    String chooseConfig(String requested, String dataset) {
        String config = configOrNull(requested);
        if (config != null) {
            return config;
        }
        if (requested != null) {
            throw new DatasetException(dataset + " has no config '" + requested + "'; its configs: " + describe()
                    + ". Choose one of them as the config");
        }
        if (configs.isEmpty()) {
            throw new DatasetException(dataset + " has no data files in a layout this loader knows; give the "
                    + "configs and their data_files in the dataset card's YAML header");
        }
        throw new DatasetException(dataset + " has several configs and none is the default: " + describe()
                + ". Choose one as the config, e.g. '" + configs.keySet().iterator().next() + "'");
    }

    /** {@link #chooseConfig}'s answer, or null where it fails. */
    String configOrNull(String requested) {
        if (requested != null) {
            return configs.containsKey(requested) ? requested : null;
        }
        if (defaultConfig != null) {
            return defaultConfig;
        }
        if (configs.size() == 1) {
            return configs.keySet().iterator().next();
        }
        return configs.containsKey(DEFAULT_CONFIG) ? DEFAULT_CONFIG : null;
    }

    /**
     * The files of {@code split} of {@code config} (which exists).
     *
     * @throws DatasetException naming the splits that exist
     */
    List<String> splitFiles(String config, String split, String dataset) {
        Map<String, List<String>> splits = configs.get(config);
        List<String> files = splits.get(split);
        if (files == null) {
            throw new DatasetException("config '" + config + "' of " + dataset + " has no split '" + split
                    + "'; its splits: " + String.join(", ", splits.keySet()) + ". Choose one of them as the split");
        }
        return files;
    }

    /** {@code "main (train, test); socratic (train, test)"}. */
    String describe() {
        if (configs.isEmpty()) {
            return "none";
        }
        return configs.entrySet().stream()
                .map(e -> e.getKey() + " (" + (e.getValue().isEmpty() ? "no splits"
                        : String.join(", ", e.getValue().keySet())) + ")")
                .collect(Collectors.joining("; "));
    }

    // ---------------------------------------------------------------- inference

    private static HubLayout inferred(List<String> dataFiles) {
        Map<String, Map<String, List<String>>> configs = new LinkedHashMap<>();
        for (String file : dataFiles.stream().sorted().toList()) {
            String[] place = place(file);
            if (place != null) {
                configs.computeIfAbsent(place[0], c -> new LinkedHashMap<>())
                        .computeIfAbsent(place[1], s -> new ArrayList<>())
                        .add(file);
            }
        }
        return new HubLayout(freeze(configs), null);
    }

    /** {config, split} of a data file by its path (see the class docs), or null for deeper paths. */
    private static String[] place(String path) {
        String[] parts = path.split("/");
        switch (parts.length) {
            case 1:
                return new String[] {DEFAULT_CONFIG, splitOfName(parts[0])};
            case 2:
                if (parts[0].equals("data")) {
                    return new String[] {DEFAULT_CONFIG, splitOfName(parts[1])};
                }
                if (NUMBERED.matcher(splitOfName(parts[1])).matches()) {
                    return new String[] {DEFAULT_CONFIG, parts[0]}; // {split}/0000.parquet
                }
                return new String[] {parts[0], splitOfName(parts[1])};
            case 3:
                String split = parts[1].startsWith("partial-") ? parts[1].substring("partial-".length()) : parts[1];
                return new String[] {parts[0].equals("data") ? DEFAULT_CONFIG : parts[0], split};
            default:
                return null;
        }
    }

    /** {@code train-00000-of-00002.parquet} -> {@code train}; {@code test.jsonl.gz} -> {@code test}. */
    private static String splitOfName(String fileName) {
        int dot = fileName.indexOf('.');
        String stem = dot > 0 ? fileName.substring(0, dot) : fileName;
        int dash = stem.indexOf('-');
        return dash > 0 ? stem.substring(0, dash) : stem;
    }

    // ---------------------------------------------------------------- declared configs

    /** The {@code configs:} list of the README's YAML header, or null when there is none. */
    private static List<?> yamlConfigs(String readme) {
        String text = readme.startsWith("\uFEFF") ? readme.substring(1) : readme;
        String[] lines = text.split("\r?\n", -1);
        if (lines.length == 0 || !lines[0].strip().equals("---")) {
            return null;
        }
        StringBuilder header = new StringBuilder();
        boolean closed = false;
        for (int i = 1; i < lines.length; i++) {
            if (lines[i].strip().equals("---")) {
                closed = true;
                break;
            }
            header.append(lines[i]).append('\n');
        }
        if (!closed) {
            return null;
        }
        Object root;
        try {
            root = YAML.readValue(header.toString(), Object.class);
        } catch (JsonProcessingException e) {
            throw new DatasetException("README.md: its YAML header is malformed (" + e.getOriginalMessage()
                    + "); fix the dataset card's metadata block between the '---' lines", e);
        }
        if (!(root instanceof Map<?, ?> map) || map.get("configs") == null) {
            return null;
        }
        if (!(map.get("configs") instanceof List<?> list)) {
            throw new DatasetException("README.md: 'configs' in the YAML header must be a list of "
                    + "{config_name, data_files} entries, got " + map.get("configs"));
        }
        return list;
    }

    private static HubLayout declared(List<?> entries, List<String> files) {
        Map<String, Map<String, List<String>>> configs = new LinkedHashMap<>();
        String defaultConfig = null;
        for (Object entry : entries) {
            if (!(entry instanceof Map<?, ?> config)) {
                throw new DatasetException("README.md: each entry of 'configs' must be a mapping with config_name "
                        + "and data_files, got " + entry);
            }
            String name = config.get("config_name") == null ? DEFAULT_CONFIG : config.get("config_name").toString();
            if (Boolean.TRUE.equals(config.get("default"))) {
                defaultConfig = name;
            }
            String dataDir = config.get("data_dir") == null ? "" : stripSlashes(config.get("data_dir").toString());
            Map<String, List<String>> splits;
            if (config.get("data_files") != null) {
                splits = new LinkedHashMap<>();
                for (Map.Entry<String, List<String>> split : splitPatterns(name, config.get("data_files")).entrySet()) {
                    splits.put(split.getKey(), matching(split.getValue(), dataDir, files));
                }
            } else {
                splits = underDirectory(dataDir, files);
            }
            configs.put(name, splits);
        }
        return new HubLayout(freeze(configs), defaultConfig);
    }

    /** {@code data_files} in any of its YAML shapes, as split -> patterns. */
    private static Map<String, List<String>> splitPatterns(String config, Object dataFiles) {
        Map<String, List<String>> splits = new LinkedHashMap<>();
        if (dataFiles instanceof String pattern) {
            splits.put("train", List.of(pattern));
        } else if (dataFiles instanceof Map<?, ?> map) {
            map.forEach((split, patterns) -> splits.put(split.toString(), patterns(config, patterns)));
        } else if (dataFiles instanceof List<?> list) {
            for (Object item : list) {
                if (item instanceof String pattern) {
                    splits.computeIfAbsent("train", s -> new ArrayList<>()).add(pattern);
                } else if (item instanceof Map<?, ?> entry && entry.get("path") != null) {
                    String split = entry.get("split") == null ? "train" : entry.get("split").toString();
                    splits.computeIfAbsent(split, s -> new ArrayList<>()).addAll(patterns(config, entry.get("path")));
                } else {
                    throw badDataFiles(config, item);
                }
            }
        } else {
            throw badDataFiles(config, dataFiles);
        }
        return splits;
    }

    private static List<String> patterns(String config, Object value) {
        if (value instanceof String pattern) {
            return List.of(pattern);
        }
        if (value instanceof List<?> list && list.stream().allMatch(p -> p instanceof String)) {
            return list.stream().map(Object::toString).toList();
        }
        throw badDataFiles(config, value);
    }

    private static DatasetException badDataFiles(String config, Object value) {
        return new DatasetException("README.md: data_files of config '" + config + "' must be a pattern, a list of "
                + "patterns, or a list of {split, path} entries, got " + value);
    }

    /** The data files matching any of {@code patterns} (relative to {@code dataDir}), pattern by pattern. */
    private static List<String> matching(List<String> patterns, String dataDir, List<String> files) {
        Set<String> matched = new LinkedHashSet<>();
        for (String pattern : patterns) {
            String full = dataDir.isEmpty() ? stripSlashes(pattern) : dataDir + "/" + stripSlashes(pattern);
            Pattern glob = glob(full);
            files.stream().filter(f -> isDataFile(f) && glob.matcher(f).matches()).sorted().forEach(matched::add);
        }
        return List.copyOf(matched);
    }

    /** The splits of the data files under {@code dataDir}, by their paths relative to it. */
    private static Map<String, List<String>> underDirectory(String dataDir, List<String> files) {
        String prefix = dataDir.isEmpty() ? "" : dataDir + "/";
        Map<String, List<String>> splits = new LinkedHashMap<>();
        for (String file : files.stream().filter(f -> f.startsWith(prefix) && isDataFile(f)).sorted().toList()) {
            String[] place = place(file.substring(prefix.length()));
            if (place != null) {
                splits.computeIfAbsent(place[1], s -> new ArrayList<>()).add(file);
            }
        }
        return splits;
    }

    private static String stripSlashes(String path) {
        String p = path.strip();
        while (p.startsWith("./")) {
            p = p.substring(2);
        }
        while (p.startsWith("/")) {
            p = p.substring(1);
        }
        while (p.endsWith("/")) {
            p = p.substring(0, p.length() - 1);
        }
        return p;
    }

    /**
     * A glob as a regular expression over repository paths: {@code **} any characters (a
     * {@code **}{@code /} also no folder at all), {@code *} and {@code ?} within one path part,
     * {@code [...]} a character class ({@code [!...]} negated).
     */
    static Pattern glob(String glob) {
        StringBuilder regex = new StringBuilder();
        int i = 0;
        while (i < glob.length()) {
            char c = glob.charAt(i);
            if (c == '*' && glob.startsWith("**/", i)) {
                regex.append("(?:.*/)?");
                i += 3;
            } else if (c == '*' && glob.startsWith("**", i)) {
                regex.append(".*");
                i += 2;
            } else if (c == '*') {
                regex.append("[^/]*");
                i++;
            } else if (c == '?') {
                regex.append("[^/]");
                i++;
            } else if (c == '[' && glob.indexOf(']', i + 2) > 0) {
                int end = glob.indexOf(']', i + 2);
                String body = glob.substring(i + 1, end);
                if (body.startsWith("!")) {
                    body = "^" + body.substring(1);
                }
                regex.append('[').append(body.replace("\\", "\\\\").replace("[", "\\[")).append(']');
                i = end + 1;
            } else {
                regex.append(Pattern.quote(String.valueOf(c)));
                i++;
            }
        }
        return Pattern.compile(regex.toString());
    }

    private static Map<String, Map<String, List<String>>> freeze(Map<String, Map<String, List<String>>> configs) {
        Map<String, Map<String, List<String>>> frozen = new LinkedHashMap<>();
        configs.forEach((config, splits) -> {
            Map<String, List<String>> copy = new LinkedHashMap<>();
            splits.forEach((split, files) -> copy.put(split, List.copyOf(files)));
            frozen.put(config, Collections.unmodifiableMap(copy));
        });
        return Collections.unmodifiableMap(frozen);
    }
}
