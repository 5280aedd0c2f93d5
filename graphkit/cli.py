"""The ``graphkit`` console script: one subcommand per problem.

Each solver module contributes an ``_add_<name>(subparsers)`` function below that
registers its subcommand with ``set_defaults(run=...)``; ``COMMANDS`` lists them.

Every subcommand prints vertices numbered as in the input file (:attr:`Graph.index_base`:
1-based for DIMACS, METIS, Matrix Market and 1-based PACE files, 0-based for edge lists and
0-based PACE files), and follows :mod:`kernels.console`'s exit statuses (2 usage error, 1
failure, 130 Ctrl-C).
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

from kernels.console import non_negative, positive_int

from .io import FORMATS

def _add_format(p):
    p.add_argument("--format", default=None, choices=FORMATS, help="input format (guessed from extension and header)")


def _labels(G, vertices):
    """Vertex ids as the file numbers them."""
    return (np.asarray(vertices, dtype=np.int64) + G.index_base).astype(str)


def _add_stats(sub):
    p = sub.add_parser("stats", help="print statistics of a graph file (n, m, degrees, components)")
    p.add_argument("file", help="graph file (DIMACS, PACE .gr, METIS, edge list, Matrix Market; .gz/.xz/.bz2; "
                                "a pipe such as /dev/stdin)")
    _add_format(p)
    p.set_defaults(run=_run_stats)


def _run_stats(args) -> int:
    from scipy.sparse.csgraph import connected_components

    from .io import read_graph

    G = read_graph(args.file, format=args.format)
    deg = G.degrees
    n_comp, labels = connected_components(G.to_scipy(), directed=False)
    sizes = np.bincount(labels) if G.n else np.zeros(0, dtype=int)
    rows = [
        ("vertices", G.n),
        ("edges", G.m),
        ("min degree", int(deg.min()) if G.n else 0),
        ("max degree", int(deg.max()) if G.n else 0),
        ("mean degree", f"{deg.mean():.3f}" if G.n else "0"),
        ("isolated vertices", int((deg == 0).sum())),
        ("components", n_comp),
        ("largest component", int(sizes.max()) if G.n else 0),
        ("density", f"{2 * G.m / (G.n * (G.n - 1)):.6f}" if G.n > 1 else "0"),
    ]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")
    return 0


def _add_mis(sub):
    p = sub.add_parser("mis", help="maximal independent set (ECL-MIS); one vertex per line, numbered as in the file")
    p.add_argument("file")
    p.add_argument("--method", choices=["ecl", "luby"], default="ecl")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", choices=["auto", "cpu", "gpu"], default="auto")
    p.add_argument("--improve", action="store_true", help="then apply (1,2)-swaps until none applies (larger set)")
    p.add_argument("--output", default="-", help="output file (default: stdout)")
    _add_format(p)
    p.set_defaults(run=_run_mis)


def _run_mis(args) -> int:
    from .io import read_graph
    from .mis import maximal_independent_set

    G = read_graph(args.file, format=args.format)
    res = maximal_independent_set(G, method=args.method, seed=args.seed, device=args.device, improve=args.improve)
    text = "\n".join(_labels(G, res.indices)) + ("\n" if res.size else "")
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as fh:
            fh.write(text)
    print(f"c {args.method} MIS of size {res.size} on {res.device} in {res.time:.3f} s", file=sys.stderr)
    return 0


def _add_vc(sub):
    p = sub.add_parser("vc", help="exact minimum (or parameterized, --k) vertex cover; PACE solution format on stdout")
    p.add_argument("file", help="graph file (DIMACS .clq, PACE .gr, ...)")
    p.add_argument("--k", type=non_negative(int), default=None,
                   help="parameterized: find a cover of size <= K or report none")
    p.add_argument("--time-limit", type=non_negative(float), default=None, help="seconds; prints the best cover found")
    p.add_argument("--method", choices=["auto", "branch_and_reduce", "hybrid", "stackonly"], default="auto",
                   help="auto: branch-and-reduce with local search and a clique-style search in turns (CPU); "
                        "hybrid / stackonly: the GPU paper's algorithm")
    p.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    p.add_argument("--device", choices=["auto", "cpu", "gpu"], default="auto")
    p.add_argument("--complement", action="store_true", help="solve on the complement graph (max clique of FILE)")
    _add_format(p)
    p.set_defaults(run=_run_vc)


def _run_vc(args) -> int:
    from .io import read_graph
    from .vertex_cover import minimum_vertex_cover, parameterized_vertex_cover

    G = read_graph(args.file, format=args.format)
    if args.complement:
        G = G.complement()
    if args.k is not None:
        res = parameterized_vertex_cover(G, args.k, device=args.device, method=args.method,
                                         time_limit=args.time_limit, progress=not args.quiet)
        if not res.found:
            what = "no vertex cover" if res.proved else "time limit reached before finding a vertex cover"
            print(f"c {what} of size <= {args.k} ({res.nodes} tree nodes, {res.time:.3f} s)", file=sys.stderr)
            return 1
        cover = res.cover
        print(f"c cover of size {res.size} <= {args.k} on {res.device} ({res.nodes} tree nodes, {res.time:.3f} s)",
              file=sys.stderr)
    else:
        res = minimum_vertex_cover(G, device=args.device, method=args.method, time_limit=args.time_limit,
                                   progress=not args.quiet)
        cover = res.cover
        state = "optimal" if res.optimal else f"not proved optimal, lower bound {res.lower_bound}"
        print(f"c vertex cover of size {res.size} ({state}) on {res.device} ({res.nodes} tree nodes, {res.time:.3f} s)",
              file=sys.stderr)
    sys.stdout.write(f"s vc {G.n} {len(cover)}\n")
    if len(cover):
        sys.stdout.write("\n".join(_labels(G, np.sort(np.asarray(cover, dtype=np.int64)))) + "\n")
    return 0


def _add_tw(sub):
    p = sub.add_parser("tw", help="exact treewidth; PACE .td tree decomposition on stdout")
    p.add_argument("file", help="graph file (PACE .gr, DIMACS, ...)")
    p.add_argument("--time-limit", type=non_negative(float), default=None,
                   help="seconds; prints the best decomposition found")
    p.add_argument("--device", choices=["auto", "cpu", "gpu"], default="auto")
    p.add_argument("--dedup", choices=["exact", "bloom"], default="exact",
                   help="duplicate removal: exact hash set or the paper's Bloom filter (Monte Carlo)")
    _add_format(p)
    p.set_defaults(run=_run_tw)


def _run_tw(args) -> int:
    from .io import read_graph, write_tree_decomposition
    from .treewidth import treewidth

    G = read_graph(args.file, format=args.format)
    res = treewidth(G, device=args.device, time_limit=args.time_limit, dedup=args.dedup)
    state = "optimal" if res.optimal else f"{res.status}, lower bound {res.lower_bound}"
    print(f"c treewidth {res.width} ({state}) on {res.device}, {res.states_expanded} states, {res.time:.3f} s",
          file=sys.stderr)
    write_tree_decomposition(res.decomposition, "-", G.n, base=G.index_base)
    return 0


def _add_cliques(sub):
    p = sub.add_parser("cliques", help="maximal cliques (Bron-Kerbosch with pivoting); one clique per line")
    p.add_argument("file")
    p.add_argument("--min-size", type=positive_int, default=1, help="only cliques with at least this many vertices")
    p.add_argument("--count-only", action="store_true", help="print the count and the size histogram only")
    p.add_argument("--device", choices=["auto", "cpu", "gpu"], default="auto")
    p.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    _add_format(p)
    p.set_defaults(run=_run_cliques)


def _run_cliques(args) -> int:
    import time

    from kernels.console import progress

    from .cliques import count_maximal_cliques, maximal_clique_chunks
    from .io import read_graph

    G = read_graph(args.file, format=args.format)
    bar = progress(G.n, "cliques", quiet=args.quiet, unit="vertex")

    def report(done, total):  # CPU: sub-problems started, one per vertex; GPU: tasks finished
        if bar.total != total:
            bar.total = total
        bar.update(done - bar.n)

    if args.count_only:
        with bar:
            res = count_maximal_cliques(G, min_size=args.min_size, device=args.device, progress=report)
        print(f"maximal cliques {res.count}")
        print(f"largest {res.max_size}")
        for size, cnt in enumerate(res.histogram):
            if cnt:
                print(f"size {size}: {int(cnt)}")
        print(f"c {res.device} in {res.time:.3f} s", file=sys.stderr)
        return 0
    t0 = time.perf_counter()
    total = 0
    G.labels = None  # ids (as the file numbers them), not a networkx graph's names
    with bar:
        for flat, off in maximal_clique_chunks(G, min_size=args.min_size, device=args.device, progress=report):
            words = _labels(G, flat)
            lines = [" ".join(words[off[i]:off[i + 1]]) for i in range(len(off) - 1)]
            sys.stdout.write("\n".join(lines) + "\n")
            total += len(lines)
    print(f"c {total} maximal cliques in {time.perf_counter() - t0:.3f} s", file=sys.stderr)
    return 0


def _add_maxclique(sub):
    p = sub.add_parser("maxclique", help="maximum clique (colouring branch and bound); size then vertices")
    p.add_argument("file")
    p.add_argument("--method", choices=["auto", "branch_and_bound", "vertex_cover"], default="auto")
    p.add_argument("--time-limit", type=non_negative(float), default=None, help="seconds; prints the best clique found")
    p.add_argument("--device", choices=["auto", "cpu", "gpu"], default="auto")
    p.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    _add_format(p)
    p.set_defaults(run=_run_maxclique)


def _run_maxclique(args) -> int:
    from .cliques import maximum_clique
    from .io import read_graph

    G = read_graph(args.file, format=args.format)
    res = maximum_clique(G, method=args.method, time_limit=args.time_limit, device=args.device,
                         progress=not args.quiet)
    print(res.size)
    print(" ".join(_labels(G, np.sort(res.indices))))
    state = "optimal" if res.optimal else "not proved optimal"
    print(f"c {res.method} on {res.device}: {state}, {res.nodes} nodes, {res.time:.3f} s", file=sys.stderr)
    return 0


COMMANDS = [_add_stats, _add_mis, _add_vc, _add_cliques, _add_maxclique, _add_tw]


def main(argv: list[str] | None = None) -> int:
    """Run ``graphkit COMMAND [options]``; returns the exit status (0 success, 1 failure,
    2 usage error, 130 Ctrl-C; see :mod:`kernels.console`)."""
    from kernels.console import ArgumentParser, run_command
    from kernels.version import __version__

    parser = ArgumentParser(prog="graphkit", formatter_class=argparse.RawDescriptionHelpFormatter,
                            description="GPU/CPU graph solvers.\n\n"
                                        "Vertices are numbered as in the input file: 1-based for DIMACS, METIS,\n"
                                        "Matrix Market and PACE files, 0-based for edge lists and for PACE files\n"
                                        "that use vertex 0.")
    parser.add_argument("--version", action="version", version=f"graphkit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in COMMANDS:
        add(sub)
    args = parser.parse_args(argv)
    return run_command(f"graphkit {args.command}", args.run, args)


if __name__ == "__main__":
    sys.exit(main())
