"""pybtex's plugins found once per build, not once per citation.

pybtex finds a plugin (a bibliography style, an output backend) by going through the entry
points of every installed package each time one is asked for (``pybtex.plugin.find_plugin``),
and sphinxcontrib-bibtex asks for several with every citation: 161 lookups of about 20 ms,
3 s of each build. pybtex looks first among the plugins registered while it runs, so the
installed ones are registered there, in one pass over the packages, when the build starts.

Relies on ``pybtex.plugin.register_plugin(force=True)`` and on pybtex's lookup
(``_load_entry_point``) reading the registered plugins before the entry points.
(tests/library/test_internals.py fails, naming it, if it moves.)
"""

from __future__ import annotations

from importlib.metadata import distributions

from pybtex.plugin import PluginGroupNotFound, register_plugin


def register_installed_plugins() -> None:
    registered = set()
    for distribution in distributions():
        for entry_point in distribution.entry_points:
            key = (entry_point.group, entry_point.name)
            if not entry_point.group.startswith("pybtex.") or key in registered:
                continue
            try:
                register_plugin(*key, entry_point.load(), force=True)
            except (ImportError, PluginGroupNotFound):
                continue  # pybtex's own lookup will meet it, and say what is wrong, if asked
            registered.add(key)


def setup(app):
    register_installed_plugins()
    return {"parallel_read_safe": True, "parallel_write_safe": True}
