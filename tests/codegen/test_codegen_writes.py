"""What a spec's writes compile to: they store nothing of their own (the fingerprint, which
table migrations check, ignores them), and each writing entity gets its mutations."""

from __future__ import annotations

import re
from pathlib import Path

from codegen import pipeline

SOCIAL = Path(__file__).parent / "cases" / "social" / "spec.toml"
KEPT = r"(unique|copies|counts|requires|owns)\.\w+"
WRITES = re.compile(rf"^(writes|expires_after|{KEPT}) = .*$", re.M)
GENERATED = re.compile(r', generated = "(id|now)"')


def fingerprint(text: str) -> str:
    files = pipeline.generate(text, "spec.toml", "social")
    found = re.search(r'FINGERPRINT = "(\w+)"', files["entities.py"])
    assert found is not None
    return found.group(1)


def test_writes_and_generated_values_leave_the_fingerprint_as_it_is() -> None:
    text = SOCIAL.read_text(encoding="utf-8")
    stripped = GENERATED.sub("", WRITES.sub("", text))
    assert stripped != text
    assert fingerprint(stripped) == fingerprint(text)


def test_each_write_is_a_mutation() -> None:
    files = pipeline.generate(SOCIAL.read_text(encoding="utf-8"), "spec.toml", "social")
    mutations = set(re.findall(r"^  (\w+)\(input: ", files["api.graphql"], re.M))
    assert mutations == {
        "createDraft",
        "updateDraft",
        "deleteDraft",
        "createMember",
        "updateMember",
        "deleteMember",
        "createFriendship",
        "deleteFriendship",
        "createPost",
        "deletePost",
        "createProduct",
        "deleteProduct",
        "createReview",
        "updateReview",
        "deleteReview",
    }
