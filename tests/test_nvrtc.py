"""kernels.nvrtc, the loader of the CUDA sources: template declarations, and every .cu compiles
with nvcc for sm_90 (all template instantiations)."""
import shutil
import subprocess

import numpy as np
import pytest

from kernels import nvrtc as cuda


def test_template_declarations_expand():
    src = "// templates: propose<V,I>, confirm<I>\n__global__ void x() {}\n"
    assert cuda.template_declarations(src) == {"propose": ("V", "I"), "confirm": ("I",)}
    exprs = cuda.name_expressions(src)
    assert "propose<double,long long>" in exprs and "confirm<int>" in exprs
    assert len(exprs) == 6


def test_unknown_template_letter_rejected():
    with pytest.raises(ValueError):
        cuda.template_declarations("// templates: k<T>\n")


def test_c_type_mapping():
    assert cuda.c_type(np.float32) == "float"
    assert cuda.c_type(np.int64) == "long long"
    with pytest.raises(TypeError):
        cuda.c_type(np.complex64)


def test_sources_exist():
    assert any(p.name == "graph.cu" for p in cuda.cuda_sources())


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
@pytest.mark.parametrize("path", cuda.cuda_sources(), ids=lambda p: p.name)
def test_nvcc_compiles(path, tmp_path):
    """Compile the file with every declared instantiation forced (address taken in host code)."""
    source = path.read_text()
    refs = ",\n".join(f"  (const void*)&{e}" for e in cuda.name_expressions(source))
    wrapper = tmp_path / f"check_{path.stem}.cu"
    body = f'#include "{path}"\n'
    if refs:
        body += f"const void* instantiations[] = {{\n{refs}\n}};\n"
    wrapper.write_text(body)
    result = subprocess.run(
        ["nvcc", "-arch=sm_90", "-std=c++17", f"-I{cuda.CUDA_DIR}", "-c", str(wrapper), "-o", str(tmp_path / "x.o")],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr


def _defines(stem):
    """The integer ``#define``s of ``kernels/cuda/<stem>.cu``."""
    import re

    text = (cuda.CUDA_DIR / f"{stem}.cu").read_text()
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^#define (\w+) \(?(-?\d+)", text, re.MULTILINE)}


def test_constants_mirrored_in_python_match_the_sources():
    """Constants that the host and the kernels must agree on, kept once in each language."""
    from kernels.factor import rounds_gpu as factor
    from kernels.forest import common as forest

    f = _defines("factor")
    assert f["SAMPLE_THREADS"] == factor.SAMPLE_THREADS
    # the sample's launch (host) stores one verdict byte per block; the proposals read them all
    assert f["SAMPLE_BLOCKS"] == factor.SAMPLE_ROWS * 32 // factor.SAMPLE_THREADS
    assert f["SLOT_ENTRIES"] == factor.ROW_SLOT_ENTRIES
    g = _defines("forest")
    assert g["DENSE_ENDS"] == forest.DENSE_ENDS
    # order_offsets: one tile per block of 256 threads (the host sizes its tile statuses)
    assert g["OFFSET_ITEMS"] * 256 == forest.OFFSET_TILE
    assert g["ORDER_ITEMS"] * 256 == forest.ORDER_TILE


@pytest.mark.gpu
def test_kernel_int_arguments_fill_parameters_of_every_integer_width():
    """kernel_int's 64-bit values reach 4- and 8-byte, signed and unsigned parameters
    intact, next to pointer and NumPy arguments (the driver copies each parameter's size)."""
    import cupy

    kernel = cupy.RawKernel(r"""
    extern "C" __global__ void echo(int a, unsigned int b, long long c, unsigned long long d, const int* e,
                                    int f, unsigned long long* out) {
        out[0] = (unsigned long long)(long long)a; out[1] = b; out[2] = (unsigned long long)c; out[3] = d;
        out[4] = (unsigned long long)(long long)e[0]; out[5] = (unsigned long long)(long long)f;
    }""", "echo")
    arg = cuda.kernel_int()
    out = cupy.zeros(6, dtype=np.uint64)
    e = cupy.asarray([-7], dtype=np.int32)
    kernel((1,), (1,), (arg(-5), arg(0xFFFFFFFE), arg(-(1 << 40)), arg((1 << 62) + 3), e, np.int32(9), out))
    expected = [(-5) % 2**64, 0xFFFFFFFE, (-(1 << 40)) % 2**64, (1 << 62) + 3, (-7) % 2**64, 9]
    assert cupy.asnumpy(out).tolist() == expected
