package comlrl.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class HubLayoutTest {
    private static final String DATASET = "dataset 'org/x'";

    private static String card(String yaml) {
        return "---\n" + yaml + "---\n# Card\n";
    }

    @Test
    void infersConfigsAndSplitsFromTheLayoutsDatasetsWrites() {
        HubLayout layout = HubLayout.of(List.of(
                ".gitattributes", "README.md",
                "data/train-00000-of-00002.parquet", "data/train-00001-of-00002.parquet",
                "data/validation-00000-of-00001.parquet",
                "main/test-00000-of-00001.parquet",
                "conv/train/0000.parquet", "conv/partial-test/0000.parquet", "conv/partial-test/0001.parquet",
                "train.parquet",
                "a/b/c/too-deep.parquet",
                ".hidden/train.parquet", "data/__pycache__.parquet"), null);

        assertThat(layout.find("default", "train")).containsExactly(
                "data/train-00000-of-00002.parquet", "data/train-00001-of-00002.parquet", "train.parquet");
        assertThat(layout.find("default", "validation")).containsExactly("data/validation-00000-of-00001.parquet");
        assertThat(layout.find("main", "test")).containsExactly("main/test-00000-of-00001.parquet");
        assertThat(layout.find("conv", "train")).containsExactly("conv/train/0000.parquet");
        assertThat(layout.find("conv", "test")).containsExactly("conv/partial-test/0000.parquet",
                "conv/partial-test/0001.parquet");
        assertThat(layout.describe()).isEqualTo("conv (test, train); default (train, validation); main (test)");
        assertThat(layout.hasOtherFormats()).isFalse();
        assertThat(layout.chooseConfig(null, DATASET)).isEqualTo("default");
    }

    @Test
    void numberedFilesInAFolderNameTheSplit() {
        HubLayout layout = HubLayout.ofParquet(List.of("train/0000.parquet", "train/0001.parquet", "test/0000.parquet",
                "notes.txt"));
        assertThat(layout.find("default", "train")).containsExactly("train/0000.parquet", "train/0001.parquet");
        assertThat(layout.describe()).isEqualTo("default (test, train)");
    }

    @Test
    void declaredConfigsInEveryDataFilesShape() {
        List<String> files = List.of("README.md", "a/train.parquet", "a/test-0.parquet", "a/test-1.parquet",
                "b/x.jsonl", "b/y.jsonl", "c/train-0.parquet", "d/sub/dev-0.parquet", "d/sub/train-0.parquet",
                "e/one.csv", "e/two.csv");
        String yaml = "configs:\n"
                + "- config_name: listed\n"
                + "  data_files:\n"
                + "  - split: train\n"
                + "    path: a/train.parquet\n"
                + "  - split: test\n"
                + "    path: [a/test-1.parquet, a/test-0.parquet]\n"
                + "- config_name: plain\n"
                + "  data_files: b/*.jsonl\n"
                + "- config_name: mapped\n"
                + "  default: true\n"
                + "  data_files:\n"
                + "    train: c/train-*\n"
                + "    extra: ['**/dev-*.parquet']\n"
                + "- config_name: directory\n"
                + "  data_dir: d/sub\n"
                + "- config_name: patterns\n"
                + "  data_files: ['e/t*.csv', 'e/o*.csv']\n";
        HubLayout layout = HubLayout.of(files, card(yaml));

        assertThat(layout.find("listed", "train")).containsExactly("a/train.parquet");
        assertThat(layout.find("listed", "test")).as("in pattern order").containsExactly("a/test-1.parquet",
                "a/test-0.parquet");
        assertThat(layout.find("plain", "train")).containsExactly("b/x.jsonl", "b/y.jsonl");
        assertThat(layout.find("mapped", "train")).containsExactly("c/train-0.parquet");
        assertThat(layout.find("mapped", "extra")).containsExactly("d/sub/dev-0.parquet");
        assertThat(layout.find("directory", "dev")).containsExactly("d/sub/dev-0.parquet");
        assertThat(layout.find("directory", "train")).containsExactly("d/sub/train-0.parquet");
        assertThat(layout.find("patterns", "train")).containsExactly("e/two.csv", "e/one.csv");
        assertThat(layout.chooseConfig(null, DATASET)).as("default: true").isEqualTo("mapped");
        assertThat(layout.hasOtherFormats()).isTrue();
        assertThat(layout.find("c", "train")).as("declared configs replace inference").isNull();
    }

    @Test
    void aCardWithoutConfigsFallsBackToInference() {
        HubLayout layout = HubLayout.of(List.of("README.md", "data/train-0.parquet"),
                card("license: mit\ndataset_info:\n  splits:\n  - name: train\n"));
        assertThat(layout.find("default", "train")).containsExactly("data/train-0.parquet");
        assertThat(HubLayout.of(List.of("data/train-0.parquet"), "# no header at all\n").find("default", "train"))
                .containsExactly("data/train-0.parquet");
    }

    @Test
    void malformedCardsAndMissingConfigsAreExplained() {
        assertThatThrownBy(() -> HubLayout.of(List.of(), card("configs: [unclosed\n")))
                .isInstanceOf(DatasetException.class)
                .hasMessageContaining("YAML header is malformed");
        assertThatThrownBy(() -> HubLayout.of(List.of(), card("configs:\n- config_name: a\n  data_files: 7\n")))
                .hasMessageContaining("data_files of config 'a'");
        HubLayout two = HubLayout.of(List.of("a/train-0.parquet", "b/train-0.parquet"), null);
        assertThatThrownBy(() -> two.chooseConfig(null, DATASET))
                .hasMessageContaining("several configs")
                .hasMessageContaining("a (train); b (train)");
        assertThatThrownBy(() -> two.chooseConfig("c", DATASET))
                .hasMessageContaining("dataset 'org/x' has no config 'c'; its configs: a (train); b (train)");
        assertThatThrownBy(() -> two.splitFiles("a", "test", DATASET))
                .hasMessageContaining("config 'a' of dataset 'org/x' has no split 'test'; its splits: train");
        assertThatThrownBy(() -> HubLayout.of(List.of("README.md"), null).chooseConfig(null, DATASET))
                .hasMessageContaining("no data files");
    }

    @Test
    void globsMatchWithinAndAcrossFolders() {
        assertThat(HubLayout.glob("data/train-*").matcher("data/train-00000-of-00001.parquet").matches()).isTrue();
        assertThat(HubLayout.glob("data/train-*").matcher("data/train-x/0.parquet").matches()).isFalse();
        assertThat(HubLayout.glob("**/*.parquet").matcher("top.parquet").matches()).isTrue();
        assertThat(HubLayout.glob("**/*.parquet").matcher("a/b/c.parquet").matches()).isTrue();
        assertThat(HubLayout.glob("data/**").matcher("data/a/b.parquet").matches()).isTrue();
        assertThat(HubLayout.glob("part-[0-9].parquet").matcher("part-7.parquet").matches()).isTrue();
        assertThat(HubLayout.glob("part-[!0-9].parquet").matcher("part-7.parquet").matches()).isFalse();
        assertThat(HubLayout.glob("a?c.parquet").matcher("a/c.parquet").matches()).isFalse();
        assertThat(HubLayout.glob("v1.0/x+y.parquet").matcher("v1.0/x+y.parquet").matches()).isTrue();
        assertThat(HubLayout.glob("v1.0/x+y.parquet").matcher("v1x0/x+y.parquet").matches()).isFalse();
    }
}
