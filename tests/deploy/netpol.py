"""A small evaluator of Kubernetes NetworkPolicies, enough for the shapes deploy/k8s uses.

Supported: ``podSelector``/``namespaceSelector`` with ``matchLabels`` and
``matchExpressions`` (``In``, ``NotIn``, ``Exists``, ``DoesNotExist``), empty selectors,
peers without ``from``/``to`` (everyone, outside the cluster included), named and numeric
ports with protocols, ``policyTypes``. ``ipBlock`` peers and port ranges are not supported
(they raise), so a policy using them cannot pass silently.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Policy = dict[str, Any]


@dataclass(frozen=True)
class Pod:
    """A network endpoint: a pod in a namespace, or ``Pod.outside()`` for the internet."""

    name: str
    namespace: str | None
    labels: dict[str, str] = field(default_factory=dict)
    namespace_labels: dict[str, str] = field(default_factory=dict)
    named_ports: dict[str, int] = field(default_factory=dict)

    @classmethod
    def outside(cls) -> Pod:
        return cls("outside the cluster", None)


def _expression_matches(expression: dict[str, Any], labels: dict[str, str]) -> bool:
    key, operator = expression["key"], expression["operator"]
    values = expression.get("values") or []
    if operator == "In":
        return key in labels and labels[key] in values
    if operator == "NotIn":
        return key not in labels or labels[key] not in values
    if operator == "Exists":
        return key in labels
    if operator == "DoesNotExist":
        return key not in labels
    raise NotImplementedError(f"selector operator {operator!r}")


def selects(selector: dict[str, Any] | None, labels: dict[str, str]) -> bool:
    """Whether a label selector (``{}`` selects everything) matches ``labels``: every
    ``matchLabels`` pair and every ``matchExpressions`` requirement (they AND)."""
    if selector is None:
        return True
    unsupported = set(selector) - {"matchLabels", "matchExpressions"}
    if unsupported:
        raise NotImplementedError(f"selector keys {unsupported}")
    wanted = selector.get("matchLabels") or {}
    expressions = selector.get("matchExpressions") or []
    return all(labels.get(key) == value for key, value in wanted.items()) and all(
        _expression_matches(expression, labels) for expression in expressions
    )


def _peer_matches(peer: dict[str, Any], other: Pod, policy_namespace: str) -> bool:
    unsupported = set(peer) - {"podSelector", "namespaceSelector"}
    if unsupported:
        raise NotImplementedError(f"peer keys {unsupported}")
    if other.namespace is None:
        return False
    if "namespaceSelector" in peer:
        in_namespace = selects(peer["namespaceSelector"], other.namespace_labels)
    else:
        in_namespace = other.namespace == policy_namespace
    return in_namespace and selects(peer.get("podSelector"), other.labels)


def _port_matches(ports: list[dict[str, Any]] | None, dst: Pod, port: int, protocol: str) -> bool:
    if not ports:
        return True
    for entry in ports:
        if "endPort" in entry:
            raise NotImplementedError("port ranges")
        if entry.get("protocol", "TCP") != protocol:
            continue
        wanted = entry.get("port")
        if wanted is None:
            return True
        number = dst.named_ports.get(wanted) if isinstance(wanted, str) else wanted
        if number == port:
            return True
    return False


def _allowed(
    policies: list[Policy],
    direction: str,
    subject: Pod,
    other: Pod,
    dst: Pod,
    port: int,
    proto: str,
) -> bool:
    """Whether ``subject``'s policies of ``direction`` let traffic with ``other`` through."""
    policy_type, key, peers_key = (
        ("Ingress", "ingress", "from") if direction == "ingress" else ("Egress", "egress", "to")
    )
    applicable = [
        p
        for p in policies
        if p["metadata"]["namespace"] == subject.namespace
        and selects(p["spec"]["podSelector"], subject.labels)
        and policy_type in p["spec"].get("policyTypes", ["Ingress"])
    ]
    if not applicable:
        return True
    for policy in applicable:
        for rule in policy["spec"].get(key) or []:
            peers = rule.get(peers_key)
            namespace = policy["metadata"]["namespace"]
            if (not peers or any(_peer_matches(p, other, namespace) for p in peers)) and (
                _port_matches(rule.get("ports"), dst, port, proto)
            ):
                return True
    return False


def connection_allowed(
    policies: list[Policy], src: Pod, dst: Pod, port: int, protocol: str = "TCP"
) -> bool:
    """Whether ``src`` may open a connection to ``dst:port`` (egress of src, ingress of dst)."""
    egress = src.namespace is None or _allowed(policies, "egress", src, dst, dst, port, protocol)
    ingress = dst.namespace is None or _allowed(policies, "ingress", dst, src, dst, port, protocol)
    return egress and ingress
