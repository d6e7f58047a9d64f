"""``sdgym view RUN_DIR...``: serve :mod:`benchmarks.protocol.viewer` on 127.0.0.1 until Ctrl-C."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``sdgym view``."""
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR",
                        help="benchmark run folders (`sdgym benchmark --out`), finished or still "
                             "running")
    parser.add_argument("--port", type=int, default=8050, help="port (0: any free port)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to bind; a non-loopback one needs --allow-remote")
    parser.add_argument("--allow-remote", action="store_true",
                        help="allow a non-loopback --host (run data becomes reachable remotely)")


def run(args: argparse.Namespace) -> int:
    """Check the folders exist, then serve the viewer until interrupted."""
    from benchmarks.protocol.viewer import create_app
    from sdgym.envs.webshop.server import check_port, serve_until_interrupted

    missing = [folder for folder in args.runs if not Path(folder).is_dir()]
    if missing:
        raise ValueError(f"RUN_DIR {missing[0]!r} is not a folder")
    check_port(args.port)
    app = create_app(args.runs)
    serve_until_interrupted(app, args.port, announce=lambda url: print(f"sdgym view: {url}",
                                                                        flush=True),
                            host=args.host, allow_remote=args.allow_remote)
    return 0
