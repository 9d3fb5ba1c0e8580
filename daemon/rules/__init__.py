"""The rules core: sensor events in, domain events out, by the FIDE Laws of Chess.

See ``daemon.rules.core`` for the theory of operation and ``docs/rules-core.md``
for the event feed.
"""

from daemon.rules.core import RulesCore
from daemon.rules.settings import RulesSettings

__all__ = ["RulesCore", "RulesSettings"]
