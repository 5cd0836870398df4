#!/usr/bin/env python3
"""Validate the conversational retrieval dev set (stdlib only).

Usage: python3 benchmarks/data/conversations/check.py
Exits non-zero and lists the problems if any check fails.
"""
import collections
import datetime
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TURNS = os.path.join(HERE, "turns.jsonl")
QUESTIONS = os.path.join(HERE, "questions.jsonl")

KINDS = ["single-hop", "multi-hop", "temporal", "open-domain", "unanswerable"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July",
          "August", "September", "October", "November", "December"]
TURN_ID = re.compile(r"^(c\d\d)-s(\d\d)-t(\d\d\d)$")
QUESTION_ID = re.compile(r"^(c\d\d)-q(\d\d\d)$")
SENTENCE_END = re.compile(r"[.!?]+[\"'\u201d\u2019)\]]*(?=\s|$)")
MIN_TURNS, MIN_QUESTIONS = 450, 180
MIN_SESSIONS, MAX_SESSIONS = 8, 12
MIN_SENTENCES, MAX_SENTENCES = 1, 6

errors = []


def err(msg):
    errors.append(msg)


def header_time(iso):
    dt = datetime.datetime.strptime(iso, "%Y-%m-%dT%H:%M")
    hour = dt.hour % 12 or 12
    ampm = "am" if dt.hour < 12 else "pm"
    return f"{hour}:{dt.minute:02d} {ampm} on {dt.day} {MONTHS[dt.month - 1]} {dt.year}"


def sentences(text):
    n = len(SENTENCE_END.findall(text))
    if not re.search(r"[.!?][\"'\u201d\u2019)\]]*\s*$", text):
        n += 1  # trailing clause without end punctuation
    return n


def load(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                err(f"{os.path.basename(path)}:{lineno}: blank line")
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                err(f"{os.path.basename(path)}:{lineno}: bad JSON ({e})")
    return rows


def check_turns(turns):
    by_id = {}
    last_key = None
    next_turn = collections.defaultdict(lambda: 1)
    session_time = {}
    session_order = collections.defaultdict(list)
    speakers = collections.defaultdict(set)
    for t in turns:
        keys = {"id", "conversation", "session", "speaker", "time", "content"}
        if set(t) != keys:
            err(f"turn {t.get('id')}: keys {sorted(t)} != {sorted(keys)}")
            continue
        tid = t["id"]
        m = TURN_ID.match(tid)
        if not m:
            err(f"turn {tid}: malformed id")
            continue
        conv, sess, num = m.group(1), int(m.group(2)), int(m.group(3))
        if tid in by_id:
            err(f"turn {tid}: duplicate id")
        by_id[tid] = t
        if t["conversation"] != conv:
            err(f"turn {tid}: conversation field {t['conversation']!r} != id prefix")
        if t["session"] != sess:
            err(f"turn {tid}: session field {t['session']!r} != id session")
        if num != next_turn[conv]:
            err(f"turn {tid}: expected turn number {next_turn[conv]} (continuous per conversation)")
        next_turn[conv] = num + 1
        key = (conv, num)
        if last_key is not None and key <= last_key:
            err(f"turn {tid}: out of order")
        last_key = key
        try:
            ht = header_time(t["time"])
        except (ValueError, TypeError):
            err(f"turn {tid}: bad time {t['time']!r}")
            continue
        sk = (conv, sess)
        if sk in session_time and session_time[sk] != t["time"]:
            err(f"turn {tid}: time differs from the rest of session {sess}")
        session_time.setdefault(sk, t["time"])
        if sess not in session_order[conv]:
            session_order[conv].append(sess)
        content = t["content"]
        if "\n" in content or "\r" in content:
            err(f"turn {tid}: content is not a single line")
        prefix = f"{t['speaker']} ({ht}): "
        if not content.startswith(prefix):
            err(f"turn {tid}: header does not match speaker/time, expected {prefix!r}")
            continue
        text = content[len(prefix):]
        if not text.strip():
            err(f"turn {tid}: empty text")
        if re.search(rf"\b{re.escape(t['speaker'])}\b", text):
            err(f"turn {tid}: speaker's own name appears in the text")
        n = sentences(text)
        if not MIN_SENTENCES <= n <= MAX_SENTENCES:
            err(f"turn {tid}: {n} sentences (allowed {MIN_SENTENCES}-{MAX_SENTENCES})")
        speakers[conv].add(t["speaker"])
    for conv, sess_list in session_order.items():
        if sess_list != list(range(1, len(sess_list) + 1)):
            err(f"{conv}: sessions not numbered 1..n in order: {sess_list}")
        if not MIN_SESSIONS <= len(sess_list) <= MAX_SESSIONS:
            err(f"{conv}: {len(sess_list)} sessions (allowed {MIN_SESSIONS}-{MAX_SESSIONS})")
        times = [session_time[(conv, s)] for s in sess_list]
        if times != sorted(times):
            err(f"{conv}: session times are not increasing")
        if len(speakers[conv]) < 2 or len(speakers[conv]) > 3:
            err(f"{conv}: {len(speakers[conv])} speakers {sorted(speakers[conv])}")
    return by_id, session_order, speakers


def check_questions(questions, by_id):
    seen = set()
    next_q = collections.defaultdict(lambda: 1)
    for q in questions:
        keys = {"id", "conversation", "question", "answers", "kind", "answer"}
        if set(q) != keys:
            err(f"question {q.get('id')}: keys {sorted(q)} != {sorted(keys)}")
            continue
        qid = q["id"]
        m = QUESTION_ID.match(qid)
        if not m:
            err(f"question {qid}: malformed id")
            continue
        conv, num = m.group(1), int(m.group(2))
        if qid in seen:
            err(f"question {qid}: duplicate id")
        seen.add(qid)
        if num != next_q[conv]:
            err(f"question {qid}: expected number {next_q[conv]}")
        next_q[conv] = num + 1
        if q["conversation"] != conv:
            err(f"question {qid}: conversation field != id prefix")
        if q["kind"] not in KINDS:
            err(f"question {qid}: unknown kind {q['kind']!r}")
        if not isinstance(q["question"], str) or not q["question"].strip().endswith("?"):
            err(f"question {qid}: question text should be a non-empty question")
        ans = q["answers"]
        if not isinstance(ans, list) or len(set(ans)) != len(ans):
            err(f"question {qid}: answers must be a list of distinct ids")
            continue
        if q["kind"] == "unanswerable":
            if ans:
                err(f"question {qid}: unanswerable but has evidence ids")
            if q["answer"] is not None:
                err(f"question {qid}: unanswerable but has a reference answer")
        else:
            if not ans:
                err(f"question {qid}: no evidence ids")
            if not isinstance(q["answer"], str) or not q["answer"].strip():
                err(f"question {qid}: missing reference answer")
            if q["kind"] == "multi-hop" and len(ans) < 2:
                err(f"question {qid}: multi-hop with a single evidence turn")
        for a in ans:
            if a not in by_id:
                err(f"question {qid}: evidence {a} does not exist")
            elif by_id[a]["conversation"] != conv:
                err(f"question {qid}: evidence {a} is from another conversation")


def main():
    turns = load(TURNS)
    questions = load(QUESTIONS)
    by_id, session_order, speakers = check_turns(turns)
    check_questions(questions, by_id)

    turn_count = collections.Counter(t["conversation"] for t in turns)
    kind_count = collections.defaultdict(collections.Counter)
    for q in questions:
        kind_count[q.get("conversation")][q.get("kind")] += 1
    total_kinds = collections.Counter(q.get("kind") for q in questions)

    head = (f"{'conv':<6}{'speakers':<26}{'sessions':>9}{'turns':>7}" + "".join(f"{k:>14}" for k in KINDS)
            + f"{'total':>7}")
    print(head)
    for conv in sorted(turn_count):
        kc = kind_count[conv]
        print(f"{conv:<6}{', '.join(sorted(speakers[conv])):<26}{len(session_order[conv]):>9}{turn_count[conv]:>7}"
              + "".join(f"{kc[k]:>14}" for k in KINDS) + f"{sum(kc.values()):>7}")
    print(f"{'all':<6}{'':<26}{sum(len(s) for s in session_order.values()):>9}{len(turns):>7}"
          + "".join(f"{total_kinds[k]:>14}" for k in KINDS) + f"{len(questions):>7}")
    if questions:
        print("kind shares: " + ", ".join(f"{k} {100 * total_kinds[k] / len(questions):.0f}%" for k in KINDS))

    if len(turns) < MIN_TURNS:
        err(f"only {len(turns)} turns (need >= {MIN_TURNS})")
    if len(questions) < MIN_QUESTIONS:
        err(f"only {len(questions)} questions (need >= {MIN_QUESTIONS})")
    qconvs = set(kind_count) - set(turn_count)
    if qconvs:
        err(f"questions for unknown conversations: {sorted(qconvs)}")

    if errors:
        print(f"\nFAILED: {len(errors)} problem(s)")
        for e in errors:
            print("  " + e)
        return 1
    print("\nOK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
