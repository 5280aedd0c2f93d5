"""SuiteSparse Matrix Collection loader with a local cache, and the paper's matrices.

``load("group/name")`` (or ``load("name")`` for registered names) looks in local folders
first (``$GPUFOREST_MATRIX_DIRS``, then ``matrices/`` of the shared data folder,
:func:`shared_data_dir`), then in the cache
(``$GPUFOREST_CACHE`` or ``$XDG_CACHE_HOME/gpuforest/suitesparse``), and otherwise
downloads the collection's Matrix Market archive ``<base>/MM/<group>/<name>.tar.gz``
with a progress bar, writing atomically.
"""
from __future__ import annotations

import os
import re
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import scipy.sparse as sp
from numpy.typing import DTypeLike

from .mmio import read_matrix

__all__ = ["MatrixInfo", "PAPER_MATRICES", "LOCAL_MATRICES", "REGISTRY", "cache_dir", "fetch", "load"]

DEFAULT_URL = "https://sparse.tamu.edu"


@dataclass(frozen=True)
class MatrixInfo:
    """A registry entry: collection group and name, size, stored nonzeros, symmetry."""

    name: str
    group: str
    n: int
    nnz: int
    symmetric: bool

    @property
    def path(self) -> str:
        return f"{self.group}/{self.name}"


#: Table 3 of Klein and Strzodka (2022) (the SuiteSparse matrices; ANISO1/2/3 are generated).
PAPER_MATRICES = [
    MatrixInfo("af_shell8", "Schenk_AFE", 504855, 17588875, True),
    MatrixInfo("atmosmodd", "Bourchtein", 1270432, 8814880, False),
    MatrixInfo("atmosmodj", "Bourchtein", 1270432, 8814880, False),
    MatrixInfo("atmosmodl", "Bourchtein", 1489752, 10319760, False),
    MatrixInfo("atmosmodm", "Bourchtein", 1489752, 10319760, False),
    MatrixInfo("Bump_2911", "Janna", 2911419, 127729899, True),
    MatrixInfo("Cube_Coup_dt0", "Janna", 2164760, 127206144, True),
    MatrixInfo("CurlCurl_3", "Bodendiek", 1219574, 13544618, True),
    MatrixInfo("CurlCurl_4", "Bodendiek", 2380515, 26515867, True),
    MatrixInfo("ecology1", "McRae", 1000000, 4996000, True),
    MatrixInfo("ecology2", "McRae", 999999, 4995991, True),
    MatrixInfo("G3_circuit", "AMD", 1585478, 7660826, True),
    MatrixInfo("Geo_1438", "Janna", 1437960, 63156690, True),
    MatrixInfo("Hook_1498", "Janna", 1498023, 60917445, True),
    MatrixInfo("Long_Coup_dt0", "Janna", 1470152, 87088992, True),
    MatrixInfo("ML_Geer", "Janna", 1504002, 110879972, False),
    MatrixInfo("StocF-1465", "Janna", 1465137, 21005389, True),
    MatrixInfo("thermal2", "Schmid", 1228045, 8580313, True),
    MatrixInfo("Transport", "Janna", 1602111, 23500731, False),
]

#: The real matrices shipped in ``../shared/data/matrices`` (nnz as stored).
LOCAL_MATRICES = [
    MatrixInfo("Trefethen_2000", "JGD_Trefethen", 2000, 41906, True),
    MatrixInfo("add20", "Hamm", 2395, 17319, False),
    MatrixInfo("bcsstk21", "HB", 3600, 26600, True),
    MatrixInfo("bcsstk25", "HB", 15439, 252241, True),
    MatrixInfo("cage9", "vanHeukelum", 3534, 41594, False),
    MatrixInfo("ex29", "FIDAP", 2870, 23754, False),
    MatrixInfo("memplus", "Hamm", 17758, 126150, False),
    MatrixInfo("orsreg_1", "HB", 2205, 14133, False),
    MatrixInfo("pde2961", "Bai", 2961, 14585, False),
    MatrixInfo("swang1", "Wang", 3169, 20841, False),
    MatrixInfo("wang1", "Wang", 2903, 19093, False),
    MatrixInfo("watt_1", "HB", 1856, 11360, False),
]

REGISTRY = {m.name.lower(): m for m in PAPER_MATRICES + LOCAL_MATRICES}


def cache_dir() -> Path:
    """Download cache: ``$GPUFOREST_CACHE``, else ``$XDG_CACHE_HOME/gpuforest/suitesparse``
    (``~/.cache/gpuforest/suitesparse`` without ``$XDG_CACHE_HOME``).

    Examples
    --------
    >>> from matrices import suitesparse
    >>> suitesparse.cache_dir().name
    'suitesparse'
    """
    if os.environ.get("GPUFOREST_CACHE"):
        return Path(os.environ["GPUFOREST_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "gpuforest" / "suitesparse"


def shared_data_dir() -> Path:
    """The project's shared benchmark data: ``$GPUFOREST_SHARED_DATA``, else ``shared/data``
    beside the repository (``../shared/data`` from its root). Its ``matrices/`` folder is
    searched for collection matrices; tests and benchmarks read its ``graphs/``."""
    env = os.environ.get("GPUFOREST_SHARED_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[1].parent / "shared" / "data"


def _local_dirs(extra) -> list[Path]:
    dirs = [Path(d) for d in (extra or [])]
    env = os.environ.get("GPUFOREST_MATRIX_DIRS")
    if env:
        dirs += [Path(d) for d in env.split(os.pathsep) if d]
    dirs += [shared_data_dir() / "matrices", Path.cwd() / ".." / "shared" / "data" / "matrices"]
    return dirs


#: A collection name: ``name`` or ``group/name``, each part letters, digits and ``_ . + -``,
#: not starting with a dot (no ``..``, no absolute path: the name becomes a cache path and a URL).
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*(/[A-Za-z0-9][A-Za-z0-9_.+-]*)?")


def _split(spec: str) -> tuple[str | None, str]:
    if not isinstance(spec, str):
        raise TypeError(f"matrix name must be a string, got {type(spec).__name__}")
    spec = spec.strip()
    if not spec:
        raise ValueError("empty matrix name")
    if not _NAME.fullmatch(spec):
        raise ValueError(f"{spec!r} is not a collection matrix name: 'name' or 'group/name' of letters, digits "
                         "and _ . + - (for a file, give its path ending in .mtx)")
    if "/" in spec:
        group, name = spec.split("/", 1)
        return group, name
    info = REGISTRY.get(spec.lower())
    return (info.group, info.name) if info else (None, spec)


def _find_file(folder: Path, name: str) -> Path | None:
    for suffix in (".mtx", ".mtx.gz", ".mtx.bz2", ".mtx.xz"):
        p = folder / f"{name}{suffix}"
        if p.is_file():
            return p
    return None


def find_local(spec: str, *, cache: str | Path | None = None, local_dirs=None) -> Path | None:
    """The ``.mtx`` file of a collection matrix if it is on this machine (the local folders
    of :func:`fetch`, then the cache), else None; never downloads."""
    group, name = _split(spec)
    for folder in _local_dirs(local_dirs):
        found = _find_file(folder, name)
        if found:
            return found
    target = _cache_target(cache, group, name) if group is not None else None
    return target if target is not None and target.is_file() else None


def _cache_target(cache, group: str, name: str) -> Path:
    """Where the cache keeps (or will keep) ``group/name``."""
    return (Path(cache) if cache is not None else cache_dir()) / group / f"{name}.mtx"


def fetch(spec: str, *, cache: str | Path | None = None, url: str | None = None, local_dirs=None,
          progress: bool = True, timeout: float = 30.0) -> Path:
    """Return the path of the ``.mtx`` file of a collection matrix, downloading if needed.

    Parameters
    ----------
    spec : str
        ``"group/name"``, or a registered ``"name"`` (see :data:`REGISTRY`).
    cache : path, optional
        Cache folder (default :func:`cache_dir`).
    url : str, optional
        Base URL of the collection (default ``$SUITESPARSE_URL`` or the public site).
    local_dirs : list of paths, optional
        Folders searched for ``<name>.mtx`` (also ``.mtx.gz/.bz2/.xz``) before the cache;
        ``$GPUFOREST_MATRIX_DIRS`` and the shared data's ``matrices/`` are always searched.
    progress : bool
        Show a tqdm progress bar while downloading.
    timeout : float
        Seconds before an unresponsive server counts as offline.

    Returns
    -------
    Path

    Raises
    ------
    ConnectionError
        The collection cannot be reached (offline); the message says where to put the file.
    FileNotFoundError
        The server has no such matrix (HTTP error).
    ValueError
        Unknown name without a group, or an archive without ``<name>.mtx``.

    Examples
    --------
    >>> from matrices import suitesparse
    >>> suitesparse.REGISTRY["ecology1"].path
    'McRae/ecology1'
    >>> suitesparse.fetch("McRae/ecology1")  # downloads 10 MB once, then cached  # doctest: +SKIP
    PosixPath('/home/me/.cache/gpuforest/suitesparse/McRae/ecology1.mtx')
    """
    found = find_local(spec, cache=cache, local_dirs=local_dirs)
    if found:
        return found
    group, name = _split(spec)
    if group is None:
        raise ValueError(
            f"matrix {name!r} is not in the registry and not found locally: give it as 'group/name'"
        )
    target = _cache_target(cache, group, name)
    base = (url or os.environ.get("SUITESPARSE_URL") or DEFAULT_URL).rstrip("/")
    _download_and_extract(f"{base}/MM/{group}/{name}.tar.gz", name, target, progress, timeout)
    return target


def _download_and_extract(address: str, name: str, target: Path, progress: bool, timeout: float):
    from tqdm.auto import tqdm

    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        archive = Path(tmp) / f"{name}.tar.gz"
        try:
            with urllib.request.urlopen(address, timeout=timeout) as response, open(archive, "wb") as out:
                total = int(response.headers.get("Content-Length") or 0) or None
                with tqdm(total=total, unit="B", unit_scale=True, desc=f"download {name}", disable=not progress) as bar:
                    while chunk := response.read(1 << 20):
                        out.write(chunk)
                        bar.update(len(chunk))
        except urllib.error.HTTPError as exc:
            raise FileNotFoundError(f"could not download {address}: HTTP {exc.code}") from exc
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            raise ConnectionError(
                f"could not download {address} ({exc}); are you offline? Put {name}.mtx in a local "
                f"folder (GPUFOREST_MATRIX_DIRS) or the cache {target.parent}"
            ) from exc
        try:
            with tarfile.open(archive, "r:gz") as tar:
                member = next((m for m in tar.getmembers() if m.isfile() and Path(m.name).name == f"{name}.mtx"), None)
                if member is None:
                    raise ValueError(f"archive {address} has no {name}.mtx")
                src = tar.extractfile(member)
                partial = Path(tmp) / f"{name}.mtx.part"
                with open(partial, "wb") as out:
                    shutil.copyfileobj(src, out)
        except tarfile.TarError as exc:
            raise ValueError(f"archive {address} is not a valid tar.gz: {exc}") from exc
        os.replace(partial, target)


def load(spec: str, dtype: DTypeLike | None = None, **kwargs) -> sp.csr_matrix:
    """Load a SuiteSparse collection matrix as CSR (see :func:`fetch` for the lookup).

    Examples
    --------
    >>> from matrices import suitesparse
    >>> A = suitesparse.load("add20")   # found in ../shared/data/matrices, no download  # doctest: +SKIP
    """
    return read_matrix(fetch(spec, **kwargs), dtype=dtype)
