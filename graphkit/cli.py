"""The ``graphkit`` console script: one subcommand per problem.

Each solver module contributes an ``_add_<name>(subparsers)`` function below that
registers its subcommand with ``set_defaults(run=...)``; ``COMMANDS`` lists them.
"""
from __future__ import annotations

import argparse
import sys

import numpy as np


def _add_stats(sub):
    p = sub.add_parser("stats", help="print statistics of a graph file (n, m, degrees, components)")
    p.add_argument("file", help="graph file (DIMACS, PACE .gr, METIS, edge list, Matrix Market; .gz/.xz/.bz2)")
    p.add_argument("--format", default=None, help="file format (guessed from extension and header)")
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
    p.add_argument("--format", default=None, help="input format (guessed from extension and header)")
    p.set_defaults(run=_run_mis)


def _run_mis(args) -> int:
    from .io import guess_format, read_graph
    from .mis import maximal_independent_set

    G = read_graph(args.file, format=args.format)
    res = maximal_independent_set(G, method=args.method, seed=args.seed, device=args.device, improve=args.improve)
    base = 0 if (args.format or guess_format(args.file)) == "edgelist" else 1
    text = "\n".join(str(int(v) + base) for v in res.vertices) + ("\n" if res.size else "")
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
    p.add_argument("--k", type=int, default=None, help="parameterized: find a cover of size <= K or report none")
    p.add_argument("--time-limit", type=float, default=None, help="seconds; prints the best cover found")
    p.add_argument("--method", choices=["hybrid", "stackonly", "auto"], default="hybrid",
                   help="GPU work distribution (the paper's); auto: small graphs and components through a "
                        "maximum clique of their complement, often much faster")
    p.add_argument("--device", choices=["auto", "cpu", "gpu"], default="auto")
    p.add_argument("--complement", action="store_true", help="solve on the complement graph (max clique of FILE)")
    p.add_argument("--format", default=None, help="input format (guessed from extension and header)")
    p.set_defaults(run=_run_vc)


def _run_vc(args) -> int:
    from .io import guess_format, read_graph
    from .vertex_cover import minimum_vertex_cover, parameterized_vertex_cover

    G = read_graph(args.file, format=args.format)
    if args.complement:
        G = G.complement()
    base = 0 if (args.format or guess_format(args.file)) == "edgelist" else 1
    if args.k is not None:
        res = parameterized_vertex_cover(G, args.k, device=args.device, method=args.method,
                                         time_limit=args.time_limit)
        if not res.found:
            what = "no vertex cover" if res.proved else "time limit reached before finding a vertex cover"
            print(f"c {what} of size <= {args.k} ({res.nodes} tree nodes, {res.time:.3f} s)", file=sys.stderr)
            return 1
        cover = res.cover
        print(f"c cover of size {res.size} <= {args.k} on {res.device} ({res.nodes} tree nodes, {res.time:.3f} s)",
              file=sys.stderr)
    else:
        res = minimum_vertex_cover(G, device=args.device, method=args.method, time_limit=args.time_limit)
        cover = res.cover
        state = "optimal" if res.optimal else f"not proved optimal, lower bound {res.lower_bound}"
        print(f"c vertex cover of size {res.size} ({state}) on {res.device} ({res.nodes} tree nodes, {res.time:.3f} s)",
              file=sys.stderr)
    sys.stdout.write(f"s vc {G.n} {len(cover)}\n")
    if len(cover):
        sys.stdout.write("\n".join(str(int(v) + base) for v in cover) + "\n")
    return 0


def _add_tw(sub):
    p = sub.add_parser("tw", help="exact treewidth; PACE .td tree decomposition on stdout")
    p.add_argument("file", help="graph file (PACE .gr, DIMACS, ...)")
    p.add_argument("--time-limit", type=float, default=None, help="seconds; prints the best decomposition found")
    p.add_argument("--device", choices=["auto", "cpu", "gpu"], default="auto")
    p.add_argument("--dedup", choices=["exact", "bloom"], default="exact",
                   help="duplicate removal: exact hash set or the paper's Bloom filter (Monte Carlo)")
    p.add_argument("--format", default=None, help="input format (guessed from extension and header)")
    p.set_defaults(run=_run_tw)


def _run_tw(args) -> int:
    from .io import read_graph, write_tree_decomposition
    from .treewidth import treewidth

    G = read_graph(args.file, format=args.format)
    res = treewidth(G, device=args.device, time_limit=args.time_limit, dedup=args.dedup)
    state = "optimal" if res.optimal else f"{res.status}, lower bound {res.lower_bound}"
    print(f"c treewidth {res.width} ({state}) on {res.device}, {res.states_expanded} states, {res.time:.3f} s",
          file=sys.stderr)
    write_tree_decomposition(res.decomposition, "-", G.n)
    return 0


def _add_cliques(sub):
    p = sub.add_parser("cliques", help="maximal cliques (Bron-Kerbosch with pivoting); one clique per line")
    p.add_argument("file")
    p.add_argument("--min-size", type=int, default=1, help="only cliques with at least this many vertices")
    p.add_argument("--count-only", action="store_true", help="print the count and the size histogram only")
    p.add_argument("--device", choices=["auto", "cpu", "gpu"], default="auto")
    p.add_argument("--format", default=None, help="input format (guessed from extension and header)")
    p.set_defaults(run=_run_cliques)


def _run_cliques(args) -> int:
    import time

    from .cliques import count_maximal_cliques, maximal_clique_chunks
    from .io import guess_format, read_graph

    G = read_graph(args.file, format=args.format)
    base = 0 if (args.format or guess_format(args.file)) == "edgelist" else 1
    if args.count_only:
        res = count_maximal_cliques(G, min_size=args.min_size, device=args.device)
        print(f"maximal cliques {res.count}")
        print(f"largest {res.max_size}")
        for size, cnt in enumerate(res.histogram):
            if cnt:
                print(f"size {size}: {int(cnt)}")
        print(f"c {res.device} in {res.time:.3f} s", file=sys.stderr)
        return 0
    t0 = time.perf_counter()
    total = 0
    for flat, off in maximal_clique_chunks(G, min_size=args.min_size, device=args.device):
        words = (np.asarray(flat, dtype=np.int64) + base).astype(str)
        lines = [" ".join(words[off[i]:off[i + 1]]) for i in range(len(off) - 1)]
        sys.stdout.write("\n".join(lines) + "\n")
        total += len(lines)
    print(f"c {total} maximal cliques in {time.perf_counter() - t0:.3f} s", file=sys.stderr)
    return 0


def _add_maxclique(sub):
    p = sub.add_parser("maxclique", help="maximum clique (colouring branch and bound); size then vertices")
    p.add_argument("file")
    p.add_argument("--method", choices=["auto", "branch_and_bound", "vertex_cover"], default="auto")
    p.add_argument("--time-limit", type=float, default=None, help="seconds; prints the best clique found")
    p.add_argument("--device", choices=["auto", "cpu", "gpu"], default="auto")
    p.add_argument("--format", default=None, help="input format (guessed from extension and header)")
    p.set_defaults(run=_run_maxclique)


def _run_maxclique(args) -> int:
    from .cliques import maximum_clique
    from .io import guess_format, read_graph

    G = read_graph(args.file, format=args.format)
    base = 0 if (args.format or guess_format(args.file)) == "edgelist" else 1
    res = maximum_clique(G, method=args.method, time_limit=args.time_limit, device=args.device)
    print(res.size)
    print(" ".join(str(int(v) + base) for v in res.vertices))
    state = "optimal" if res.optimal else "not proved optimal"
    print(f"c {res.method} on {res.device}: {state}, {res.nodes} nodes, {res.time:.3f} s", file=sys.stderr)
    return 0


COMMANDS = [_add_stats, _add_mis, _add_vc, _add_cliques, _add_maxclique, _add_tw]


def main(argv: list[str] | None = None) -> int:
    """Run ``graphkit COMMAND [options]``; returns the exit status."""
    from kernels.version import __version__

    parser = argparse.ArgumentParser(prog="graphkit", description="GPU/CPU graph solvers.")
    parser.add_argument("--version", action="version", version=f"graphkit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in COMMANDS:
        add(sub)
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except (ValueError, OSError, RuntimeError) as exc:
        print(f"graphkit {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
