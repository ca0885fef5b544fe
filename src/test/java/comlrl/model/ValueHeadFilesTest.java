package comlrl.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import comlrl.model.io.Safetensors;
import comlrl.tensor.DType;
import comlrl.tensor.Device;
import comlrl.tensor.LibtorchPickle;
import comlrl.tensor.Scope;
import comlrl.tensor.Tensor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** Saving, loading and restoring value heads: both files, both shapes, and the width checks. */
class ValueHeadFilesTest {
    private static final int E = 8;

    private static void assertSameParameters(ValueHead expected, ValueHead actual) {
        assertThat(actual.namedParameters().keySet()).containsExactlyElementsOf(expected.namedParameters().keySet());
        expected.namedParameters().forEach((name, p) ->
                assertThat(actual.namedParameters().get(name).bitEquals(p)).as(name).isTrue());
    }

    @ParameterizedTest
    @CsvSource({"0,float32", "4,float32", "0,bfloat16", "4,bfloat16"})
    void saveThenLoadRoundTripsBitExactlyThroughEitherFile(int hidden, String dtypeName, @TempDir Path tmp) {
        DType dtype = DType.fromTorchName(dtypeName);
        Path dir = tmp.resolve("critic");
        try (ValueHead saved = ValueHead.create(E, hidden, dtype, Device.CPU, 11)) {
            saved.save(dir);
            assertThat(dir.resolve(ValueHead.SAFETENSORS_FILE)).isRegularFile();
            assertThat(dir.resolve(ValueHead.TORCH_FILE)).isRegularFile();
            for (Path from : new Path[] {dir, dir.resolve(ValueHead.SAFETENSORS_FILE), dir.resolve(ValueHead.TORCH_FILE)}) {
                try (ValueHead loaded = ValueHead.load(from, E, hidden, dtype, Device.CPU)) {
                    assertThat(loaded.hiddenDim()).isEqualTo(hidden);
                    assertThat(loaded.dtype()).isEqualTo(dtype);
                    assertSameParameters(saved, loaded);
                    assertThat(loaded.parameters()).allSatisfy(p -> assertThat(p.requiresGrad()).isTrue());
                }
            }
        }
    }

    @Test
    void aDirectoryWithOnlyTheTorchFileIsReadFromIt(@TempDir Path tmp) throws Exception {
        try (ValueHead saved = ValueHead.create(E, 4, DType.F32, Device.CPU, 12);
                ValueHead other = ValueHead.create(E, 4, DType.F32, Device.CPU, 13)) {
            saved.save(tmp);
            Files.delete(tmp.resolve(ValueHead.SAFETENSORS_FILE));
            other.restore(tmp);
            assertSameParameters(saved, other);
        }
    }

    @Test
    void theSafetensorsFileIsPreferredWhenBothArePresent(@TempDir Path tmp) {
        try (ValueHead first = ValueHead.create(E, 0, DType.F32, Device.CPU, 1);
                ValueHead second = ValueHead.create(E, 0, DType.F32, Device.CPU, 2);
                ValueHead target = ValueHead.create(E, 0, DType.F32, Device.CPU, 3)) {
            first.save(tmp);
            Path other = tmp.resolve("other");
            second.save(other);
            try (Scope s = Scope.open()) {
                Safetensors.save(Safetensors.load(other.resolve(ValueHead.SAFETENSORS_FILE)),
                        tmp.resolve(ValueHead.SAFETENSORS_FILE));
            }
            target.restore(tmp); // safetensors from `second`, .pt from `first`
            assertSameParameters(second, target);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 4})
    void theTorchFileIsTheReferenceStateDictForLibtorch(int hidden, @TempDir Path tmp) throws Exception {
        try (ValueHead head = ValueHead.create(E, hidden, DType.F32, Device.CPU, 21); Scope s = Scope.open()) {
            head.save(tmp);
            Map<String, Tensor> read = LibtorchPickle.load(Files.readAllBytes(tmp.resolve(ValueHead.TORCH_FILE)));
            if (hidden == 0) {
                assertThat(read.keySet()).containsExactly("value_projection.weight", "value_projection.bias");
            } else {
                assertThat(read.keySet()).containsExactly("pre_projection.0.weight", "pre_projection.0.bias",
                        "value_projection.weight", "value_projection.bias");
                assertThat(read.get("pre_projection.0.weight").shape()).containsExactly(hidden, E);
                assertThat(read.get("pre_projection.0.bias").shape()).containsExactly(hidden);
            }
            assertThat(read.get("value_projection.weight").shape()).containsExactly(1, hidden > 0 ? hidden : E);
            assertThat(read.get("value_projection.bias").shape()).containsExactly(1);
            head.namedParameters().forEach((name, p) -> assertThat(read.get(name).bitEquals(p.detach())).as(name).isTrue());
        }
    }

    @Test
    void whatLibtorchsPickleSaveWritesIsRestored(@TempDir Path tmp) throws Exception {
        try (ValueHead saved = ValueHead.create(E, 4, DType.F32, Device.CPU, 31);
                ValueHead target = ValueHead.create(E, 4, DType.F32, Device.CPU, 32); Scope s = Scope.open()) {
            Map<String, Tensor> detached = new LinkedHashMap<>();
            saved.namedParameters().forEach((name, p) -> detached.put(name, p.detach()));
            Path file = tmp.resolve("value_head.pt");
            Files.write(file, LibtorchPickle.save(detached)); // a Dict[str, Tensor] wrapped in restore_type_tag
            target.restore(file);
            assertSameParameters(saved, target);
        }
    }

    /**
     * Files written by the reference ({@code torch.save(value_head.state_dict(), path)}: an
     * OrderedDict with {@code _metadata}), recorded by scripts/record-value-head-fixtures.py with
     * element k of the i-th tensor set to k/8 - i.
     */
    @ParameterizedTest
    @CsvSource({"no-hidden-f32.pt,0,float32", "hidden-3-f32.pt,3,float32", "hidden-3-bf16.pt,3,bfloat16"})
    void filesTheReferenceSavedAreRestored(String name, int hidden, String dtypeName) throws Exception {
        Path file = Path.of(getClass().getResource("/value-head/" + name).toURI());
        try (ValueHead head = ValueHead.load(file, 4, hidden, DType.F32, Device.CPU)) {
            int i = 0;
            for (Tensor p : head.parameters()) {
                double[] values = p.toDoubleArray();
                for (int k = 0; k < values.length; k++) {
                    assertThat(values[k]).as("element %d of tensor %d", k, i).isEqualTo(k / 8.0 - i);
                }
                i++;
            }
            assertThat(i).isEqualTo(hidden > 0 ? 4 : 2);
        }
        DType fileType = DType.fromTorchName(dtypeName);
        try (ValueHead head = ValueHead.load(file, 4, hidden, fileType, Device.CPU)) {
            assertThat(head.dtype()).isEqualTo(fileType);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {ValueHead.SAFETENSORS_FILE, ValueHead.TORCH_FILE})
    void aWiderSavedHeadNamesTheSavedWidthAndTheFix(String fileName, @TempDir Path tmp) {
        Path file = tmp.resolve(fileName);
        try (ValueHead saved = ValueHead.create(E, 4, DType.F32, Device.CPU, 41)) {
            saved.save(tmp);
        }
        try (ValueHead none = ValueHead.create(E, 0, DType.F32, Device.CPU, 42)) {
            Map<String, Tensor> before = snapshot(none);
            assertThatThrownBy(() -> none.restore(file))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining(file.toString())
                    .hasMessageContaining("the saved value head has hidden width 4 ('pre_projection.0.weight' [4, 8])")
                    .hasMessageContaining("this head has no hidden layer (expected 'value_projection.weight' [1, 8])")
                    .hasMessageContaining("set value_head_hidden_dim: 4")
                    .hasMessageContaining("as in the saved run");
            assertUnchanged(before, none);
        }
        try (ValueHead other = ValueHead.create(E, 6, DType.F32, Device.CPU, 43)) {
            assertThatThrownBy(() -> other.restore(file))
                    .hasMessageContaining("has hidden width 4 ('pre_projection.0.weight' [4, 8]) but this head has "
                            + "hidden width 6 (expected 'pre_projection.0.weight' [6, 8]); set value_head_hidden_dim: 4");
        }
    }

    @Test
    void aSavedHeadWithoutHiddenLayerAsksToUnsetTheWidth(@TempDir Path tmp) {
        try (ValueHead saved = ValueHead.create(E, 0, DType.F32, Device.CPU, 51)) {
            saved.save(tmp);
        }
        try (ValueHead wide = ValueHead.create(E, 16, DType.F32, Device.CPU, 52)) {
            assertThatThrownBy(() -> wide.restore(tmp))
                    .hasMessageContaining(tmp.resolve(ValueHead.SAFETENSORS_FILE).toString())
                    .hasMessageContaining("the saved value head has no hidden layer ('value_projection.weight' [1, 8]) "
                            + "but this head has hidden width 16 (expected 'pre_projection.0.weight' [16, 8])")
                    .hasMessageContaining("unset value_head_hidden_dim");
        }
    }

    @Test
    void aHeadOfAnotherBackboneIsRefused(@TempDir Path tmp) {
        try (ValueHead saved = ValueHead.create(E, 4, DType.F32, Device.CPU, 61)) {
            saved.save(tmp);
        }
        assertThatThrownBy(() -> ValueHead.load(tmp.resolve(ValueHead.TORCH_FILE), 12, 4, DType.F32, Device.CPU))
                .hasMessageContaining(tmp.resolve(ValueHead.TORCH_FILE).toString())
                .hasMessageContaining("reads hidden states of size 8 ('pre_projection.0.weight' [4, 8]) but this "
                        + "backbone's hidden size is 12 (expected 'pre_projection.0.weight' [4, 12])")
                .hasMessageContaining("the backbone of the saved run");
    }

    @Test
    void filesThatAreNoValueHeadAreRefused(@TempDir Path tmp) throws Exception {
        try (ValueHead head = ValueHead.create(E, 0, DType.F32, Device.CPU, 71)) {
            assertThatThrownBy(() -> head.restore(tmp))
                    .hasMessageContaining(tmp + " holds neither value_head.safetensors nor value_head.pt");
            assertThatThrownBy(() -> head.restore(tmp.resolve("missing.pt")))
                    .hasMessageContaining("No value head at " + tmp.resolve("missing.pt"));
            Path model = tmp.resolve("model.safetensors");
            try (Scope s = Scope.open()) {
                Safetensors.save(Map.of("lm_head.weight", Tensor.zerosOf(DType.F32, Device.CPU, 4, 8)), model);
            }
            assertThatThrownBy(() -> head.restore(model))
                    .hasMessageContaining(model + " holds no value head: 'value_projection.weight' is missing (it holds "
                            + "lm_head.weight [4, 8])");
            Path extra = tmp.resolve("extra.safetensors");
            try (Scope s = Scope.open()) {
                Map<String, Tensor> state = new LinkedHashMap<>();
                head.namedParameters().forEach((name, p) -> state.put(name, p.detach()));
                state.put("value_projection.scale", Tensor.zerosOf(DType.F32, Device.CPU, 1));
                Safetensors.save(state, extra);
            }
            assertThatThrownBy(() -> head.restore(extra))
                    .hasMessageContaining("holds tensors a value head does not have: value_projection.scale");
            Path text = tmp.resolve("notes.pt");
            Files.writeString(text, "not a checkpoint");
            assertThatThrownBy(() -> head.restore(text)).hasMessageContaining("is not a torch.save archive");
        }
    }

    @Test
    void nonFiniteSavedValuesAreRefusedAndLeaveTheHeadAsItWas(@TempDir Path tmp) {
        try (ValueHead head = ValueHead.create(E, 0, DType.F32, Device.CPU, 81)) {
            Path file = tmp.resolve(ValueHead.SAFETENSORS_FILE);
            try (Scope s = Scope.open()) {
                Map<String, Tensor> state = new LinkedHashMap<>();
                state.put("value_projection.weight", Tensor.fullOf(Double.NaN, DType.F32, Device.CPU, 1, E));
                state.put("value_projection.bias", Tensor.zerosOf(DType.F32, Device.CPU, 1));
                Safetensors.save(state, file);
            }
            Map<String, Tensor> before = snapshot(head);
            assertThatThrownBy(() -> head.restore(tmp))
                    .hasMessageContaining(file + ": tensor 'value_projection.weight' holds NaN or infinite values");
            assertUnchanged(before, head);
        }
    }

    private static Map<String, Tensor> snapshot(ValueHead head) {
        Map<String, Tensor> copy = new LinkedHashMap<>();
        head.namedParameters().forEach((name, p) -> copy.put(name, p.detach().cloneTensor()));
        return copy;
    }

    private static void assertUnchanged(Map<String, Tensor> before, ValueHead head) {
        before.forEach((name, t) -> assertThat(head.namedParameters().get(name).detach().bitEquals(t)).as(name).isTrue());
        before.values().forEach(Tensor::close);
    }

    @Test
    void aFullDiskLeavesThePreviousHeadFilesWholeAndNothingBeside(@TempDir Path tmp) throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("critic"));
        Files.writeString(dir.resolve("config.json"), "{}"); // the backbone's files are left alone
        try (ValueHead first = ValueHead.create(E, 4, DType.F32, Device.CPU, 21);
                ValueHead second = ValueHead.create(E, 4, DType.F32, Device.CPU, 22)) {
            first.save(dir);
            byte[] safetensors = Files.readAllBytes(dir.resolve(ValueHead.SAFETENSORS_FILE));
            byte[] torch = Files.readAllBytes(dir.resolve(ValueHead.TORCH_FILE));
            // the safetensors copy fits, the .pt does not
            try (comlrl.model.io.TestDisks.Restore full = comlrl.model.io.TestDisks.fullAfter(safetensors.length + 10)) {
                assertThatThrownBy(() -> second.save(dir)).isInstanceOf(java.io.UncheckedIOException.class)
                        .hasMessageContaining("Cannot write " + dir.resolve(ValueHead.TORCH_FILE))
                        .hasMessageContaining("unchanged");
            }
            assertThat(Files.readAllBytes(dir.resolve(ValueHead.SAFETENSORS_FILE))).isEqualTo(safetensors);
            assertThat(Files.readAllBytes(dir.resolve(ValueHead.TORCH_FILE))).isEqualTo(torch);
            try (var list = Files.list(dir)) {
                assertThat(list.map(p -> p.getFileName().toString()).sorted().toList())
                        .containsExactly("config.json", ValueHead.TORCH_FILE, ValueHead.SAFETENSORS_FILE);
            }
            try (ValueHead loaded = ValueHead.load(dir, E, 4, DType.F32, Device.CPU)) {
                assertSameParameters(first, loaded);
            }
        }
    }
}
