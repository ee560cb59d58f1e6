"""The one YAML loader of every config, spec and published file: PyYAML's safe loader, refusing a key written
twice in one mapping and aliases that expand a document past MAX_YAML_NODES values (an alias bomb)."""
from __future__ import annotations

from typing import Any

import yaml


class UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a key written twice in one mapping (PyYAML keeps the last silently). Keys
    merged in with `<<:` may be overridden, as YAML allows."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            if isinstance(key, (str, int, float, bool)) and key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {key!r} appears twice (lines {seen[key]} and {line})", key_node.start_mark)
            seen.setdefault(key, line)
        return super().construct_mapping(node, deep)

    def get_single_node(self) -> yaml.Node | None:
        """The document's node graph, refused when its aliases expand it past MAX_YAML_NODES: PyYAML shares an
        aliased value, but every later copy or walk (overrides, merging, validation) expands it, so a
        700-byte alias bomb would take minutes and gigabytes."""
        node = super().get_single_node()
        if node is not None:
            _expanded_size(node, {}, set())
        return node


MAX_YAML_NODES = 100_000  # the largest built-in spec has a few thousand once expanded


def _expanded_size(node: yaml.Node, sizes: dict[int, int], open_nodes: set[int]) -> int:
    """How many nodes `node` stands for with every alias expanded (each shared node counted once, its size
    reused); a YAMLError past MAX_YAML_NODES or for an alias inside its own anchor."""
    if id(node) in sizes:
        return sizes[id(node)]
    if id(node) in open_nodes:
        raise yaml.composer.ComposerError(None, None, "found an alias inside the value it names (a recursive "
                                          "alias); expected a finite document", node.start_mark)
    open_nodes.add(id(node))
    children = node.value if isinstance(node, yaml.SequenceNode) else \
        [n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode) else []
    size = 1 + sum(_expanded_size(child, sizes, open_nodes) for child in children)
    open_nodes.discard(id(node))
    if size > MAX_YAML_NODES:
        raise yaml.composer.ComposerError(None, None, f"found aliases that expand to more than {MAX_YAML_NODES:,} "
                                          "values (an alias bomb?); expected a document of at most that many",
                                          node.start_mark)
    sizes[id(node)] = size
    return size
