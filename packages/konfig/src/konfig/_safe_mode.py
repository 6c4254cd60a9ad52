"""Safe mode: `konfig.resolve(cfg, allowed=[...])` for untrusted configs; what `_resolve` loads on first use.

Two layers, one module each, on the policy of what a safe resolve may use (`_safe_policy`):

* `check_allowed` (`_safe_precheck`), before anything is imported or called: every `__qualname__` /
  `__const__` reachable from the config (through references, placeholders and plain dicts too) is
  matched against the allow-list and all refused targets are reported at once.
* `Guard` (`_safe_guard`), while resolving: the one choke point every object passes through before the
  resolver uses it, judged by what it *is*, not by a name that reached it. Plain values' methods that
  interpret format strings (`str.format`) are refused, codecs that would import a module are refused, and
  the size of what an operation or a plain value's method builds is computed from its operands *before*
  it runs (`_safe_operations`: `"a" * 10**10`, `"x" * 30000 .join("y" * 30000)`, `"%s" * 1000 % ...`),
  against a per-result limit and a budget of bytes for the whole resolve; what each one reads (`read_size`:
  a thousand `big.count("ab")`, `==` of shared nests with 2**30 paths) against a budget of work
  (`_safe_budget`).

The guard of a resolve is the policy in force (`_policy`) while it runs (`enter` / `leave`): every nested
`konfig.resolve` (a target's own, kd's model building) checks against it too. Beside them, the audit hook
(`_audit`) refuses what no config may do, whatever the policy.

Usage: `patterns = check_allowed(cfg, ["optax"]); token = enter(Guard(patterns)); ...; leave(token)`.
"""

from __future__ import annotations

from ._safe_guard import Guard as Guard
from ._safe_guard import enter as enter
from ._safe_guard import leave as leave
from ._safe_precheck import check_allowed as check_allowed
