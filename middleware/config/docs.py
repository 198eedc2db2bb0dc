"""``docs/settings.md``, written from the declarations (``kgmw settings --markdown``).

A test keeps the file equal to :func:`settings_markdown`, so no setting goes
undocumented and no documented default drifts from the code.
"""

from __future__ import annotations

from middleware.config.fields import Setting
from middleware.config.settings import SETTINGS

INTRO = """\
# Settings

<!-- Written by `kgmw settings --markdown > docs/settings.md` from the declarations in
middleware/config/ (areas.py, methods.py); a test keeps this file current. -->

Every setting has a name, a type, a default, a range and a help text, declared once in
`middleware/config/`: one table per area (`areas.py`) and one per method
(`methods.py`; a method reads its own table and no other's). The CLI and the service
(`kgmw serve`, `create_app`) read the same declarations.

Values are resolved in this order, later ones winning:

1. the default below;
2. a TOML file: `--config PATH`, else `$KGMW_CONFIG`, else `./kgmw.toml` if present. Keys sit
   at the top level or in a `[kgmw]` table;
3. an environment variable `KGMW_<NAME>` (upper case; the CLI notes on stderr a `KGMW_*`
   variable that reads like a setting's but names none, such as `KGMW_METOD`);
4. a command-line flag, where the command has one.

Every value is converted to the setting's type and checked against its range on the way
in. An unknown key, a value of the wrong type or a value out of range stops the command
with a `ConfigError` naming the setting, where the value came from and what it expects.
`kgmw settings` prints every value and where it came from.

```toml
# kgmw.toml
[kgmw]
endpoint = "https://query.wikidata.org/sparql"
profile = "wikidata"
timeout = 20
retries = 2
rok_top_k = 3

# an OpenAI-compatible LLM instead of the embedded one (key from $OPENAI_API_KEY)
llm_base_url = "http://localhost:8000/v1"
llm_model = "Qwen/Qwen2.5-7B-Instruct"
```

A config file may also name sources, one `[sources.NAME]` table each, holding source
settings (`store`, `endpoint`, `profile`, `timeout`, ...). Commands that take
`--source NAME` use that table's values over the rest; `sample` always names the
bundled sample graph.

```toml
[sources.wikidata]
endpoint = "https://query.wikidata.org/sparql"
profile = "wikidata"
timeout = 20

[sources.movies]
store = "/data/metaqa-store"
profile = "metaqa"
```

An endpoint behind authentication takes its credentials per source: HTTP Basic
(`endpoint_user`, `endpoint_password`), a Bearer token (`endpoint_token`) or any headers
(`endpoint_headers`, one `Name: value` per line). Write a secret as `env:NAME` to have it
read from environment variable NAME when the source opens, so the file never holds it;
`KGMW_ENDPOINT_PASSWORD` and the other `KGMW_*` variables set them for the default source
(and for `--endpoint URL`). A named source uses only the credentials in its own table:
the general ones never follow `--source NAME` to another endpoint.
A user name and password inside the endpoint URL (`https://user:pass@host/sparql`) are
sent as Basic auth and cut from the URL. Credentials only ever become request headers:
errors, `kgmw settings`, `kgmw doctor`, `/v1/sources`, source names and answer steps show
the URL without them, and a refused request says which settings to set, never a value.
A redirect to another scheme, host or port is followed without them.

```toml
[sources.company]
endpoint = "https://graphdb.example.com/repositories/kg"
endpoint_user = "reader"
endpoint_password = "env:COMPANY_KG_PASSWORD"

[sources.vendor]
endpoint = "https://kg.vendor.example/sparql"
endpoint_token = "env:VENDOR_TOKEN"               # Authorization: Bearer ...
endpoint_headers = "X-Tenant: films"
```

In Python, general settings are attributes (`settings.timeout`) and a method's table
is typed: `settings.table(RoKSettings).top_k`.
"""


def _row(setting: Setting) -> str:
    default = "" if setting.default is None else f"`{setting.default}`"
    kind = setting.type.__name__ + (" or unset" if setting.nullable else "")
    return (
        f"| `{setting.name}` | `{setting.env_var}` | {kind} | {default} | "
        f"{setting.range_text()} | {setting.help} |"
    )


def settings_markdown() -> str:
    """The whole of docs/settings.md."""
    parts = [INTRO]
    areas: dict[str, list[Setting]] = {}
    for setting in SETTINGS:
        areas.setdefault(setting.area, []).append(setting)
    for area, entries in areas.items():
        parts.append(f"\n## {area}\n")
        parts.append("| setting | environment | type | default | range | what it does |")
        parts.append("|---|---|---|---|---|---|")
        parts.extend(_row(s) for s in entries)
    return "\n".join(parts) + "\n"
