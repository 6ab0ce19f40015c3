"""Cold start on Lambda, measured here: a fresh process that imports a handler and answers
one HTTP API event, for keygraph's handler (keygraph.serve.lambda_handler on the social
case's package), this repository's server (server.aws_lambda.http) and a minimal Strawberry
+ Mangum app, side by side in alternating rounds, with the bare interpreter's start as the
floor. Prints the medians (wall and CPU milliseconds) and each handler's ratio to the
minimal app.

`python -m bench lambda-cold [--rounds N]`"""

from __future__ import annotations

import os
import resource
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
    """Wall and CPU milliseconds of one fresh process running `program`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", program], env=env, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall * 1000, cpu * 1000


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
            "PYTHONPATH": os.pathsep.join([directory, str(ROOT)]),
            "KEYGRAPH_PACKAGE": "social",
            "KEYGRAPH_JWT_SECRET": SECRET,
            "AWS_REGION": "eu-west-1",
            "AWS_ACCESS_KEY_ID": "cold",
            "AWS_SECRET_ACCESS_KEY": "cold",
        }
        event = f"EVENT = {EVENT % issue(SECRET, 'acme', 'm1', roles=['member'])!r}\n"
        runs: dict[str, list[tuple[float, float]]] = {name: [] for name in PROGRAMS}
        for _ in range(rounds):
            for name, program in PROGRAMS.items():
                answer = "" if name == "interpreter" else event + ANSWER
                runs[name].append(once(program + answer, env))
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
