"""Differential check: agentwire and the reference ran the same scripted turn
(`agentwire conformance --scenario turns/every-item-type --transcripts DIR`); their
transcripts must have the same shape.

Compared: the item lifecycle in order (turn/started and turn/completed with the turn's status,
item/started and item/completed with the item's type), and for each item type the member names
of its completed item. Ids, texts, timestamps and notifications outside the lifecycle are not.

Usage: python3 tools/conformance_diff.py AGENTWIRE.jsonl REFERENCE.jsonl
"""

import json
import sys

LIFECYCLE = ("turn/started", "turn/completed", "item/started", "item/completed")


def shape(path):
    sequence = []
    members = {}
    with open(path, encoding="utf-8") as transcript:
        for number, record in enumerate(transcript, 1):
            record = json.loads(record)
            if record["dir"] != "server->client":
                continue
            message = json.loads(record["line"])
            method = message.get("method")
            if method not in LIFECYCLE or "id" in message:
                continue
            params = message.get("params", {})
            if method.startswith("turn/"):
                sequence.append((method, params["turn"]["status"]))
            else:
                item = params["item"]
                sequence.append((method, item["type"]))
                if method == "item/completed":
                    members.setdefault(item["type"], set()).update(item)
    if not sequence:
        sys.exit(f"{path}: no turn or item notifications")
    return sequence, members


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    ours, theirs = shape(sys.argv[1]), shape(sys.argv[2])
    problems = []
    if ours[0] != theirs[0]:
        problems.append("lifecycle differs:\n  agentwire: %s\n  reference: %s" % (ours[0], theirs[0]))
    for kind in sorted(set(ours[1]) | set(theirs[1])):
        mine, ref = ours[1].get(kind, set()), theirs[1].get(kind, set())
        if mine != ref:
            problems.append(
                "%s members differ: only agentwire %s, only the reference %s"
                % (kind, sorted(mine - ref), sorted(ref - mine))
            )
    for problem in problems:
        print("DIFFERENT " + problem)
    print(
        "%d lifecycle notifications, %d item types compared: %s"
        % (len(ours[0]), len(ours[1]), "different" if problems else "same shape")
    )
    sys.exit(1 if problems else 0)


main()
