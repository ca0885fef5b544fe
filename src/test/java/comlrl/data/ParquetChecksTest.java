package comlrl.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Parquet files whose footer or page headers state sizes and counts the file does not hold: each
 * is refused, naming the file, the row group and the column, before Parquet's reader allocates
 * by them or loads fewer rows than the footer states ({@link ParquetChecks}).
 */
class ParquetChecksTest {
    @TempDir
    Path dir;

    /** 50 rows {@code {prompt: "p<i>", i}} in one Snappy row group; its first page is the prompt column's data page. */
    private Path good;

    @BeforeEach
    void writeGood() {
        good = TestParquet.write(dir.resolve("good.parquet"), 0, 50, 1 << 20);
    }

    @Test
    void anUneditedRewriteLoadsAsTheOriginal() {
        Path same = TestParquet.rewrite(good, dir.resolve("same.parquet"), header -> { }, footer -> { });
        assertThat(Dataset.fromParquet(same)).isEqualTo(Dataset.fromParquet(good));
        Path longer = TestParquet.rewrite(good, dir.resolve("longer.parquet"),
                header -> header.setCrc(12345), footer -> { }); // the header grows by the crc field
        assertThat(Dataset.fromParquet(longer).column("i")).isEqualTo(Dataset.fromParquet(good).column("i"));
    }

    @Test
    void aColumnChunkLargerThanTheFileIsRefusedBeforeAllocating() throws IOException {
        // Parquet's reader allocates the stated chunk (in 8 MiB pieces) before it reads a byte
        Path hostile = TestParquet.rewrite(good, dir.resolve("hostile.parquet"), header -> { },
                footer -> footer.getRow_groups().get(0).getColumns().get(0).getMeta_data()
                        .setTotal_compressed_size(4_200_000_000L));
        assertThat(Files.size(hostile)).isLessThan(2048);
        assertThatThrownBy(() -> Dataset.fromParquet(hostile))
                .isInstanceOf(DatasetException.class)
                .hasMessageStartingWith(hostile + ": column 'prompt' of row group 0 declares 4200000000 bytes at offset 4, "
                        + "but the column data of the file lies in bytes [4, ");
        assertThatThrownBy(() -> ParquetStream.open(hostile).iterator().hasNext())
                .isInstanceOf(DatasetException.class).hasMessageContaining("declares 4200000000 bytes at offset 4");
    }

    @Test
    void aPageLargerThanItsChunkIsRefused() {
        Path hostile = TestParquet.rewrite(good, dir.resolve("hostile.parquet"),
                header -> header.setCompressed_page_size(1 << 30), footer -> { });
        assertThatThrownBy(() -> Dataset.fromParquet(hostile))
                .isInstanceOf(DatasetException.class)
                .hasMessageStartingWith(hostile + ": column 'prompt' of row group 0: the page at offset 4 declares "
                        + "1073741824 bytes, but ")
                .hasMessageContaining("bytes of the column chunk remain");
    }

    @Test
    void aDecompressedSizeTheCodecCannotProduceIsRefused() {
        // Snappy produces at most 64 bytes from 3: 2 GiB from a few hundred bytes is a lie to allocate by
        Path hostile = TestParquet.rewrite(good, dir.resolve("hostile.parquet"),
                header -> header.setUncompressed_page_size(Integer.MAX_VALUE), footer -> { });
        assertThatThrownBy(() -> Dataset.fromParquet(hostile))
                .isInstanceOf(DatasetException.class)
                .hasMessageContaining("column 'prompt' of row group 0: the page at offset 4 declares 2147483647 bytes when "
                        + "decompressed from ")
                .hasMessageContaining("more than SNAPPY can produce");
        assertThat(ParquetChecks.maxExpansion(org.apache.parquet.hadoop.metadata.CompressionCodecName.UNCOMPRESSED, 100))
                .isEqualTo(100);
    }

    @Test
    void pagesHoldingFewerValuesThanTheFooterStatesAreRefused() {
        Path fewer = TestParquet.rewrite(good, dir.resolve("fewer.parquet"),
                header -> header.getData_page_header().setNum_values(40), footer -> { });
        assertThatThrownBy(() -> Dataset.fromParquet(fewer))
                .isInstanceOf(DatasetException.class)
                .hasMessageStartingWith(fewer + ": column 'prompt' of row group 0: its pages hold 40 values, but the footer "
                        + "states 50");
        Path moreRows = TestParquet.rewrite(good, dir.resolve("more-rows.parquet"), header -> { },
                footer -> footer.getRow_groups().get(0).setNum_rows(60));
        assertThatThrownBy(() -> Dataset.fromParquet(moreRows))
                .isInstanceOf(DatasetException.class)
                .hasMessageContaining("column 'prompt' of row group 0: holds 50 values, but the footer states 60 rows");
    }
}
