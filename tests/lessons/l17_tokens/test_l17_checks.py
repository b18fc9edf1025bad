"""Lesson 17's self-checks: each passes the learner's five BPE functions written right (and the
ways of writing them that are also right), says "No answer yet" to None, names every mistake of
its tables when a function written the way a learner would write it makes that mistake, and
refuses clearly a function that raises, returns nothing or the wrong kind of thing, or takes other
arguments. The wrong functions here are written independently of the check's own rows."""

from __future__ import annotations

from collections import Counter
from functools import partial
from itertools import pairwise

import numpy as np
import pytest

from attention_lessons.l17_tokens import checks
from attnlib import tokens

# --- the learner's functions, right ------------------------------------------------------------------


def pair_counts(ids):
    counts = {}
    for pair in pairwise(ids):
        counts[pair] = counts.get(pair, 0) + 1
    return counts


def merge(ids, pair, new_id):
    out, i = [], 0
    while i < len(ids):
        if i < len(ids) - 1 and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def train(text, n_merges):
    ids = list(text.encode("utf-8"))
    merges = []
    for i in range(n_merges):
        counts = pair_counts(ids)
        pair = min(counts, key=lambda p: (-counts[p], p))
        merges.append(pair)
        ids = merge(ids, pair, 256 + i)
    return merges


def encode(text, merges):
    ids = list(text.encode("utf-8"))
    rank = {pair: i for i, pair in enumerate(merges)}
    while len(ids) >= 2:
        pair = min(pairwise(ids), key=lambda p: rank.get(p, float("inf")))
        if pair not in rank:
            break
        ids = merge(ids, pair, 256 + rank[pair])
    return ids


def decode(ids, merges):
    vocab = {b: bytes([b]) for b in range(256)}
    for i, (a, b) in enumerate(merges):
        vocab[256 + i] = vocab[a] + vocab[b]
    return b"".join(vocab[t] for t in ids).decode("utf-8", errors="replace")


# --- written otherwise, and also right -------------------------------------------------------------------


def counter_counts(ids):
    return Counter(pairwise(ids))  # a Counter is a dict


def encode_in_list_order(text, merges):
    """Each merge once over the whole list, in the order learned: the same as lowest rank first, since a
    merge never makes a pair of an earlier merge (its new token is in no earlier pair)."""
    ids = list(text.encode("utf-8"))
    for i, pair in enumerate(merges):
        ids = merge(ids, pair, 256 + i)
    return ids


def decode_with_a_list(ids, merges):
    vocab = [bytes([b]) for b in range(256)]
    for a, b in merges:
        vocab.append(vocab[a] + vocab[b])
    return bytes(byte for t in ids for byte in vocab[t]).decode("utf-8", "replace")


def train_with_a_tuple(text, n_merges):
    return tuple(train(text, n_merges))


# --- the learner's functions, each with one mistake ------------------------------------------------------


def wrong_counts(ids, *, how):
    counts = {}
    if how == "non-overlapping":  # each pair counted as str.count counts
        for pair in pairwise(ids):
            if pair in counts:
                continue
            n, i = 0, 0
            while i < len(ids) - 1:
                if (ids[i], ids[i + 1]) == pair:
                    n, i = n + 1, i + 2
                else:
                    i += 1
            counts[pair] = n
        return counts
    step = 2 if how == "step 2" else 1
    stop = len(ids) - (2 if how == "last missing" else 1)
    for i in range(0, stop, step):
        pair = (ids[i], ids[i + 1])
        counts[pair] = 1 if how == "presence" else counts.get(pair, 0) + 1
    return counts


def merge_for_loop(ids, pair, new_id):
    out = []
    for i in range(len(ids)):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == tuple(pair):
            out.append(new_id)
        else:
            out.append(ids[i])
    return out


def merge_all_matches(ids, pair, new_id):
    ids = list(ids)
    found = [i for i in range(len(ids) - 1) if (ids[i], ids[i + 1]) == tuple(pair)]
    for i in reversed(found):  # from the end, so that the indices stay valid
        ids[i : i + 2] = [new_id]
    return ids


def merge_from_the_right(ids, pair, new_id):
    out, i = [], len(ids) - 1
    while i >= 0:
        if i >= 1 and ids[i - 1] == pair[0] and ids[i] == pair[1]:
            out.insert(0, new_id)
            i -= 2
        else:
            out.insert(0, ids[i])
            i -= 1
    return out


def merge_first_only(ids, pair, new_id):
    for i in range(len(ids) - 1):
        if ids[i] == pair[0] and ids[i + 1] == pair[1]:
            return [*ids[:i], new_id, *ids[i + 2 :]]
    return list(ids)


def merge_first_token(ids, pair, new_id):
    out, i = [], 0
    while i < len(ids):
        if i < len(ids) - 1 and ids[i] == pair[0]:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def merge_dropping_the_last(ids, pair, new_id):
    out, i = [], 0
    while i < len(ids) - 1:
        if ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def wrong_train(
    text, n_merges, *, recount=True, tie="smaller", base=256, chars=False, merge=merge, count=pair_counts
):
    ids = [ord(c) for c in text] if chars else list(text.encode("utf-8"))
    if not recount:
        counts = count(ids)
        if tie == "first":
            return sorted(counts, key=counts.get, reverse=True)[:n_merges]
        return sorted(counts, key=lambda p: (-counts[p], p))[:n_merges]
    merges = []
    for i in range(n_merges):
        counts = count(ids)
        if tie == "first":
            pair = max(counts, key=counts.get)
        elif tie == "larger":
            pair = max(counts, key=lambda p: (counts[p], p))
        else:
            pair = min(counts, key=lambda p: (-counts[p], p))
        merges.append(pair)
        ids = merge(ids, pair, base + i)
    return merges


def wrong_encode(text, merges, *, chars=False, base=256, merge=merge):
    ids = [ord(c) for c in text] if chars else list(text.encode("utf-8"))
    rank = {tuple(pair): i for i, pair in enumerate(merges)}
    while len(ids) >= 2:
        pair = min(pairwise(ids), key=lambda p: rank.get(p, float("inf")))
        if pair not in rank:
            break
        ids = merge(ids, pair, base + rank[pair])
    return ids


def encode_in_reverse(text, merges):
    ids = list(text.encode("utf-8"))
    for i in range(len(merges) - 1, -1, -1):
        ids = merge(ids, merges[i], 256 + i)
    return ids


def encode_most_frequent_first(text, merges):
    ids = list(text.encode("utf-8"))
    rank = {pair: i for i, pair in enumerate(merges)}
    while True:
        counts = pair_counts(ids)
        known = {pair: n for pair, n in counts.items() if pair in rank}
        if not known:
            return ids
        pair = max(known, key=known.get)
        ids = merge(ids, pair, 256 + rank[pair])


def encode_one_merge(text, merges):
    ids = list(text.encode("utf-8"))
    for i, pair in enumerate(merges):
        if pair in pair_counts(ids):
            return merge(ids, pair, 256 + i)
    return ids


def encode_stopping_at_an_absent_pair(text, merges):
    ids = list(text.encode("utf-8"))
    for i, pair in enumerate(merges):
        if pair not in pair_counts(ids):
            break
        ids = merge(ids, pair, 256 + i)
    return ids


def encode_longest_match(text, merges):
    vocab = [bytes([b]) for b in range(256)]
    for a, b in merges:
        vocab.append(vocab[a] + vocab[b])
    data, ids, i = text.encode("utf-8"), [], 0
    while i < len(data):
        best = max(
            (t for t in range(len(vocab)) if data.startswith(vocab[t], i)), key=lambda t: len(vocab[t])
        )
        ids.append(best)
        i += len(vocab[best])
    return ids


def _vocab(merges):
    vocab = {b: bytes([b]) for b in range(256)}
    for i, (a, b) in enumerate(merges):
        vocab[256 + i] = vocab[a] + vocab[b]
    return vocab


def decode_each_token(ids, merges):
    vocab = _vocab(merges)
    return "".join(vocab[t].decode("utf-8", errors="replace") for t in ids)


def decode_latin1(ids, merges):
    vocab = _vocab(merges)
    return "".join(chr(byte) for t in ids for byte in vocab[t])


def decode_ignoring(ids, merges):
    vocab = _vocab(merges)
    return b"".join(vocab[t] for t in ids).decode("utf-8", errors="ignore")


def decode_chr(ids, merges):
    return "".join(chr(t) for t in ids)


CASES = {
    "pair_counts": (
        checks.check_pair_counts, pair_counts, checks.PAIR_COUNTS_MISTAKES,
        [partial(wrong_counts, how=how) for how in ("non-overlapping", "step 2", "last missing", "presence")],
    ),
    "merge": (
        checks.check_merge, merge, checks.MERGE_MISTAKES,
        [merge_for_loop, merge_all_matches, merge_from_the_right, merge_first_only, merge_first_token,
         merge_dropping_the_last],
    ),
    "train": (
        checks.check_train, train, checks.TRAIN_MISTAKES,
        [partial(wrong_train, recount=False), partial(wrong_train, recount=False, tie="first"),
         partial(wrong_train, tie="first"), partial(wrong_train, tie="larger"),
         partial(wrong_train, chars=True),
         partial(wrong_train, base=257), partial(wrong_train, base=255),
         partial(wrong_train, merge=merge_for_loop), partial(wrong_train, merge=merge_all_matches),
         partial(wrong_train, count=partial(wrong_counts, how="non-overlapping"))],
    ),
    "encode": (
        checks.check_encode, encode, checks.ENCODE_MISTAKES,
        [partial(wrong_encode, chars=True), encode_in_reverse, encode_most_frequent_first, encode_one_merge,
         encode_stopping_at_an_absent_pair, encode_longest_match, partial(wrong_encode, base=257),
         partial(wrong_encode, base=255), partial(wrong_encode, merge=merge_for_loop),
         partial(wrong_encode, merge=merge_all_matches)],
    ),
    "decode": (
        checks.check_decode, decode, checks.DECODE_MISTAKES,
        [decode_each_token, decode_latin1, decode_ignoring, decode_chr],
    ),
}  # fmt: skip

CASES_OF = {
    "pair_counts": checks._pair_counts_cases,
    "merge": checks._merge_cases,
    "train": checks._train_cases,
    "encode": checks._encode_cases,
    "decode": checks._decode_cases,
}


@pytest.mark.parametrize("name", CASES)
def test_the_right_function_passes_and_none_is_no_answer_yet(name: str) -> None:
    check, right, _, _ = CASES[name]
    yours = {}
    result = check(right, keep=yours)
    assert result.passed and result.message.startswith(f"Correct: my_{name} gives attnlib's"), result
    assert yours == {name: right}  # what the lesson then runs on the corpus
    assert str(check(None)).startswith(f"✘ No answer yet: my_{name} is None")
    assert str(check(...)).startswith("✘ No answer yet")


@pytest.mark.parametrize(
    ("check", "function"),
    [
        (checks.check_pair_counts, counter_counts),
        (checks.check_pair_counts, tokens.pair_counts),
        (checks.check_merge, tokens.merge),
        (checks.check_merge, lambda ids, pair, new_id: tuple(merge(ids, pair, new_id))),
        (checks.check_train, train_with_a_tuple),
        (checks.check_train, lambda text, n: [list(pair) for pair in train(text, n)]),  # pairs as lists
        (checks.check_train, tokens.train),
        (checks.check_encode, encode_in_list_order),
        (checks.check_encode, tokens.encode),
        (checks.check_encode, lambda text, merges: np.array(encode(text, merges))),  # a 1-D array of ints
        (checks.check_decode, decode_with_a_list),
        (checks.check_decode, tokens.decode),
    ],
)
def test_other_right_ways_pass(check, function) -> None:
    result = check(function)
    assert result.passed, result


@pytest.mark.parametrize("name", CASES)
def test_every_mistake_of_the_table_is_named(name: str) -> None:
    check, _, table, wrong_functions = CASES[name]
    assert len(wrong_functions) == len(table), "one learner's function per row of the table"
    for mistake, fn in zip(table, wrong_functions, strict=True):
        result = check(fn)
        assert not result.passed and result.message.startswith(mistake.name), (mistake.name, result)
        assert "\n" not in result.message and " Seen on " in result.message


@pytest.mark.parametrize("name", CASES)
def test_each_row_makes_its_mistake_and_no_message_shows_a_right_answer(name: str) -> None:
    check, _, table, wrong_functions = CASES[name]
    cases = CASES_OF[name]()
    for mistake, fn in zip(table, wrong_functions, strict=True):
        made = [mistake.wrong(ex) for ex in cases]
        assert any(wrong is not None and wrong != ex.right for wrong, ex in zip(made, cases, strict=True)), (
            f"{mistake.name}: the row changes no case"
        )
        learner = [checks.READERS[ex.kind](fn(*ex.args), ex) for ex in cases]
        assert learner == [
            ex.right if wrong is None else wrong for wrong, ex in zip(made, cases, strict=True)
        ], f"{mistake.name}: the row does not give what the learner's function gives"
        message = check(fn).message
        for ex in cases:
            if ex.kind != "text":  # a decoded text is the text the case names (decode undoes encode)
                assert repr(ex.right) not in message and str(ex.right) not in message, (mistake.name, message)


def test_two_tie_rules_that_agree_on_one_case_are_told_apart_by_the_others() -> None:
    """On "aaabdaaabac" the pair seen first and the larger pair are the same; the other cases differ."""
    first, larger = checks.TRAIN_MISTAKES[2], checks.TRAIN_MISTAKES[3]
    case = checks._train_cases()[0]
    assert first.wrong(case) == larger.wrong(case) != case.right
    assert checks.check_train(partial(wrong_train, tie="larger")).message.startswith(larger.name)
    assert checks.check_train(partial(wrong_train, tie="first")).message.startswith(first.name)


def test_a_function_that_raises_is_reported_with_its_error() -> None:
    def raises(ids):
        raise ValueError("not enough values to unpack (expected 2, got 1)")

    result = checks.check_pair_counts(raises)
    assert not result.passed
    assert result.message.startswith(
        'Your my_pair_counts raised ValueError on the bytes of "aaabdaaabac": not enough values to unpack'
    )
    keyed = checks.check_decode(lambda ids, merges: "".join(chr(t) for t in ids if {}[t]))
    assert keyed.message.startswith("Your my_decode raised KeyError on ")
    assert keyed.message.endswith("learned from a sonnet: 84; a dict of yours has no key 84.")
    long = checks.check_merge(lambda *args: (_ for _ in ()).throw(RuntimeError("x" * 500)))
    assert "raised RuntimeError" in long.message and len(long.message) < 400 and "…" in long.message


def test_the_common_errors_come_with_a_hint() -> None:
    def strict_decode(ids, merges):
        return b"".join(_vocab(merges)[t] for t in ids).decode("utf-8")

    result = checks.check_decode(strict_decode)
    assert result.message.startswith(
        "Your my_decode raised UnicodeDecodeError on the ids [104, 105, 32, 169]"
    )
    assert 'errors="replace"' in result.message
    per_token_strict = checks.check_decode(lambda ids, m: "".join(_vocab(m)[t].decode("utf-8") for t in ids))
    assert (
        "UnicodeDecodeError" in per_token_strict.message and "join all the bytes" in per_token_strict.message
    )

    def encode_without_a_guard(text, merges):  # min() of no pairs once the text is one token
        ids = list(text.encode("utf-8"))
        rank = {pair: i for i, pair in enumerate(merges)}
        while True:
            pair = min(pairwise(ids), key=lambda p: rank.get(p, float("inf")))
            if pair not in rank:
                return ids
            ids = merge(ids, pair, 256 + rank[pair])

    unguarded = checks.check_encode(encode_without_a_guard)
    assert unguarded.message.startswith('Your my_encode raised ValueError on "aaaa" with 2 merges'), unguarded
    assert "stop when fewer than two tokens are left" in unguarded.message


BAD_RETURNS = {
    "a list of pairs, not counts": (
        checks.check_pair_counts, lambda ids: list(pairwise(ids)),
        "Not counts: my_pair_counts returned a list of pairs; count them",
    ),
    "most_common()": (
        checks.check_pair_counts, lambda ids: Counter(pairwise(ids)).most_common(),
        "Not a dict: my_pair_counts returned a list of (pair, count), as Counter.most_common() gives",
    ),
    "a set of pairs": (
        checks.check_pair_counts, lambda ids: set(pairwise(ids)),
        "Not a dict: my_pair_counts returned a set",
    ),
    "str keys": (
        checks.check_pair_counts, lambda ids: {f"{a},{b}": n for (a, b), n in pair_counts(ids).items()},
        "Not pair counts: my_pair_counts's dict has the key '97,97'",
    ),
    "float counts": (
        checks.check_pair_counts, lambda ids: {p: n / 1 for p, n in pair_counts(ids).items()},
        "Not pair counts: my_pair_counts's dict gives the pair (97, 97) the count 4.0; each count is a whole",
    ),
    "merge returns text": (
        checks.check_merge, lambda ids, pair, new_id: str(merge(ids, pair, new_id)),
        "Not token ids: my_merge returned text",
    ),
    "merge returns a generator": (
        checks.check_merge, lambda ids, pair, new_id: (t for t in merge(ids, pair, new_id)),
        "Not a list: my_merge returned a generator (an iterator, read once); wrap it in list(...)",
    ),
    "merge returns floats": (
        checks.check_merge, lambda ids, pair, new_id: [float(t) for t in merge(ids, pair, new_id)],
        "Not token ids: item 0 of what my_merge returned is 256.0 (float)",
    ),
    "minbpe's dict of merges": (
        checks.check_train, lambda text, n: {pair: 256 + i for i, pair in enumerate(train(text, n))},
        "Not a list: my_train returned a dict; the lesson's merges are a list of pairs in the order",
    ),
    "the ids, not the merges": (
        checks.check_train, lambda text, n: encode(text, train(text, n)),
        "Not merges: my_train returned a list of numbers; return the merges, each a pair",
    ),
    "triples": (
        checks.check_train, lambda text, n: [(a, b, 256 + i) for i, (a, b) in enumerate(train(text, n))],
        "Not merges: item 0 of what my_train returned is (97, 97, 256), not a pair",
    ),
    "encode returns bytes": (
        checks.check_encode, lambda text, merges: bytes(t % 256 for t in encode(text, merges)),
        "Not token ids: my_encode returned bytes",
    ),
    "decode returns bytes": (
        checks.check_decode, lambda ids, merges: b"".join(_vocab(merges)[t] for t in ids),
        "Not text: my_decode returned bytes; return a str: decode the joined bytes once, "
        'data.decode("utf-8", errors="replace")',
    ),
    "decode returns a list": (
        checks.check_decode, lambda ids, merges: [_vocab(merges)[t] for t in ids],
        "Not text: my_decode returned a list; return one str: join the tokens' bytes",
    ),
    "decode returns a number": (
        checks.check_decode, lambda ids, merges: len(ids),
        "Not text: my_decode returned an int; return a str.",
    ),
    "a wrong number of merges": (
        checks.check_train, lambda text, n: train(text, n - 1),
        'Not yet, on "aaabdaaabac", 3 merges (pairs tie, and a merged pair is counted again): 3 merges were '
        "asked for; my_train returned 2.",
    ),
}  # fmt: skip


@pytest.mark.parametrize("what", BAD_RETURNS)
def test_the_wrong_kind_of_answer_is_refused_saying_what_is_wrong(what: str) -> None:
    check, function, said = BAD_RETURNS[what]
    result = check(function)
    assert not result.passed and result.message.startswith(said), result
    assert "\n" not in result.message


@pytest.mark.parametrize("name", CASES)
def test_nothing_returned_wrong_arguments_and_no_function_are_refused(name: str) -> None:
    check, right, _, _ = CASES[name]
    assert check(lambda *args: None).message.startswith(f"Nothing returned: my_{name} returns None")

    def no_arguments():
        return right()

    result = check(no_arguments)
    assert result.message.startswith(f"Wrong arguments: the lesson calls my_{name}("), result
    assert f"yours is my_{name}() (too many positional arguments)." in result.message
    fixed = lambda first, second, third, fourth: right(first)  # noqa: E731
    result = check(fixed)
    assert result.message.startswith(f"Wrong arguments: the lesson calls my_{name}("), result
    assert f"yours is my_{name}(first, second, third, fourth) (" in result.message
    assert check(right.__name__).message.startswith(f"Not a function: my_{name} is a str")


def test_another_way_of_being_wrong_says_where_without_the_answer() -> None:
    off_by_one = checks.check_pair_counts(
        lambda ids: {p: n + (p == (97, 97)) for p, n in pair_counts(ids).items()}
    )
    assert off_by_one.message == (
        'Not yet, on the bytes of "aaabdaaabac": my_pair_counts\'s count of the pair (97, 97) is off.'
    )
    extra = checks.check_pair_counts(lambda ids: pair_counts(ids) | {(0, 0): 1})
    assert "which is no adjacent pair of these ids" in extra.message
    missing = checks.check_pair_counts(
        lambda ids: {p: n for p, n in pair_counts(ids).items() if p != (98, 97)}
    )
    assert "the pair (98, 97) is missing" in missing.message
    swapped = checks.check_encode(lambda text, merges: encode(text, merges)[::-1])
    assert (
        swapped.message.startswith("Not yet, on a line of Shakespeare")
        and "from token 0 on" in swapped.message
    )
    shouted = checks.check_decode(lambda ids, merges: decode(ids, merges).upper())
    assert "from character 1 on" in shouted.message


def test_a_later_failing_check_withdraws_the_function() -> None:
    yours = {"merge": merge}
    assert checks.check_train(train, keep=yours).passed
    assert yours == {"merge": merge, "train": train}
    assert not checks.check_train(partial(wrong_train, tie="first"), keep=yours).passed
    assert yours == {"merge": merge}  # the lesson will not run the broken one
    assert checks.check_train(train, keep=yours).passed
    assert not checks.check_train(None, keep=yours).passed
    assert yours == {"merge": merge}
    assert checks.check_train(train).passed  # without keep, nothing is kept


def test_the_learners_input_is_a_copy() -> None:
    def merge_in_place(ids, pair, new_id):
        result = merge(ids, pair, new_id)
        ids.clear()  # a learner's function may change its arguments: the next case and the rows are safe
        return result

    assert checks.check_merge(merge_in_place).passed
    assert checks.check_merge(merge).passed


def test_the_cases_hold_what_the_issue_asks_for() -> None:
    texts = [ex.args[0] for ex in checks._train_cases()] + [ex.args[0] for ex in checks._encode_cases()]
    assert any("é" in text for text in texts) and any("🙂" in text for text in texts)
    assert any("Shall I compare thee" in text for text in texts)
    merge_ids = [ex.args[0] for ex in checks._merge_cases()]
    assert [97, 97, 97, 97, 97] in merge_ids  # overlapping occurrences
    counts = checks._pair_counts_cases()
    assert any(max(ex.right.values(), default=0) > 1 for ex in counts)
    assert any(t >= 256 for ex in counts for t in ex.args[0])
