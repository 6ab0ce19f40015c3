"""Cold start on Lambda, measured here: a fresh process that imports a handler and answers one HTTP
API event, for keygraph's handler (keygraph.serve.lambda_handler on the social case's package), this
repository's compiled API (server.aws_lambda.http) and a minimal Strawberry + Mangum app, side by
side in alternating rounds, with the bare interpreter's start as the floor. Prints the medians (wall
and CPU milliseconds) and each handler's ratio to the minimal app.

Each process is timed from its start to its answer (it then exits without tearing down, as
an execution environment stays up), with every module's bytecode cached (a first round,
not counted, writes it under a temporary PYTHONPYCACHEPREFIX), as pip installs packages.

`python -m bench lambda-cold [--rounds N]`"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from bench import harness
from codegen import output, pipeline

ROOT = Path(__file__).parents[1]
SPEC = ROOT / "tests" / "codegen" / "cases" / "social" / "spec.toml"
SECRET = "cold-start-secret-" + "s" * 32
EVENT = """{"version": "2.0", "routeKey": "POST /graphql", "rawPath": "/graphql",
 "rawQueryString": "", "headers": {"content-type": "application/json",
 "authorization": "Bearer %s"}, "requestContext": {"http": {"method": "POST",
 "path": "/graphql", "sourceIp": "198.51.100.7"}}, "body": "{\\"query\\": \\"{ __typename }\\"}",
 "isBase64Encoded": false}"""
ANSWER = """
import asyncio, json
asyncio.set_event_loop(asyncio.new_event_loop())
answer = handler(json.loads(EVENT), None)
assert answer["statusCode"] == 200 and not answer["isBase64Encoded"], answer
assert "__typename" in answer["body"], answer
"""
ANSWERED = """
import os, resource, time
usage = resource.getrusage(resource.RUSAGE_SELF)
print(time.monotonic(), (usage.ru_utime + usage.ru_stime) * 1000, flush=True)
os._exit(0)
"""
KEYGRAPH = "from keygraph.serve.lambda_handler import handler\n"
SERVER = "from server.aws_lambda.http import handler\n"
STRAWBERRY = """
import strawberry
from mangum import Mangum
from strawberry.asgi import GraphQL

@strawberry.type
class Query:
    hello: str = "world"

handler = Mangum(GraphQL(strawberry.Schema(Query)), lifespan="off")
"""
PROGRAMS = {
    "interpreter": "pass",
    "keygraph": KEYGRAPH,
    "server": SERVER,
    "strawberry+mangum": STRAWBERRY,
}


def once(program: str, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU milliseconds of a fresh process running `program`, to its answer."""
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", program + ANSWERED], env=env, check=True, capture_output=True
    )
    answered, cpu = map(float, done.stdout.split())
    return (answered - start) * 1000, cpu


def main(argv: Sequence[str]) -> None:
    parser = harness.parser("lambda-cold", __doc__)
    parser.add_argument("--rounds", type=int, default=15)
    rounds = parser.parse_args(argv).rounds
    from keygraph.tokens import issue

    with tempfile.TemporaryDirectory() as directory:
        files = pipeline.generate(SPEC.read_text(encoding="utf-8"), SPEC.name, "social")
        output.write(files, Path(directory) / "social")
        env = {
            **os.environ,
            "PYTHONDONTWRITEBYTECODE": "",  # empty: bytecode is written
            "PYTHONPYCACHEPREFIX": str(Path(directory) / "pycache"),
            "PYTHONPATH": os.pathsep.join([directory, str(ROOT)]),
            "KEYGRAPH_PACKAGE": "social",
            "KEYGRAPH_JWT_SECRET": SECRET,
            "AWS_REGION": "eu-west-1",
            "AWS_ACCESS_KEY_ID": "cold",
            "AWS_SECRET_ACCESS_KEY": "cold",
        }
        event = f"EVENT = {EVENT % issue(SECRET, 'acme', 'm1', roles=['member'])!r}\n"
        runs: dict[str, list[tuple[float, float]]] = {name: [] for name in PROGRAMS}
        for round_ in range(rounds + 1):  # round 0 writes the bytecode
            for name, program in PROGRAMS.items():
                answer = "" if name == "interpreter" else event + ANSWER
                timed = once(program + answer, env)
                if round_:
                    runs[name].append(timed)
    medians = {
        name: (statistics.median(w for w, _ in found), statistics.median(c for _, c in found))
        for name, found in runs.items()
    }
    print(f"{'':20} {'wall ms':>8} {'cpu ms':>8}   ({rounds} rounds, medians)")
    for name, (wall, cpu) in medians.items():
        print(f"{name:20} {wall:8.0f} {cpu:8.0f}")
    for name in ("keygraph", "server"):
        ratio = medians[name][0] / medians["strawberry+mangum"][0]
        print(f"{name} / strawberry+mangum, wall: {ratio:.2f}x")
