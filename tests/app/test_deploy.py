"""The deployment files agree with the server: no container engine runs here, so these
read them and check what would otherwise only fail on a site's cluster."""

from __future__ import annotations

import re

import yaml

from cachegraph.settings import Settings, env_name
from tests.conftest import ROOT

DOCKER = ROOT / "docker"
SETTINGS = {env_name(name) for name in Settings.__dataclass_fields__}


def test_the_image_runs_unprivileged_with_read_only_data_and_a_readiness_check():
    dockerfile = (DOCKER / "Dockerfile").read_text()
    assert re.search(r"^FROM python:3\.\d+-slim$", dockerfile, re.M)
    assert re.search(r"^USER cachegraph$", dockerfile, re.M)
    assert 'VOLUME ["/data"]' in dockerfile
    assert "http://127.0.0.1:8000/readyz" in dockerfile
    assert set(re.findall(r"(CACHEGRAPH_[A-Z_]+)=", dockerfile)) <= SETTINGS


def test_compose_puts_nginx_with_the_tested_configuration_before_the_replicas():
    compose = yaml.safe_load((DOCKER / "compose.yaml").read_text())
    app, nginx = compose["services"]["app"], compose["services"]["nginx"]
    assert app["deploy"]["replicas"] >= 2
    assert "/readyz" in " ".join(app["healthcheck"]["test"])
    assert any(v.endswith(":/data:ro") for v in app["volumes"])
    assert set(app["environment"]) <= SETTINGS
    mounted = nginx["volumes"][0].split(":")[0]
    assert (DOCKER / mounted).resolve() == DOCKER / "nginx" / "cachegraph.conf"
    assert nginx["depends_on"]["app"]["condition"] == "service_healthy"
    assert "server app:8000" in (DOCKER / "nginx" / "cachegraph.conf").read_text()


def test_kubernetes_probes_use_readiness_and_liveness():
    manifests = {
        path.name: yaml.safe_load(path.read_text()) for path in (DOCKER / "k8s").glob("*.yaml")
    }
    assert sorted(manifests["kustomization.yaml"]["resources"]) == sorted(
        name for name in manifests if name != "kustomization.yaml"
    )
    pod = manifests["deployment.yaml"]["spec"]["template"]["spec"]
    [container] = pod["containers"]
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["startupProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert {e["name"] for e in container["env"]} <= SETTINGS
    assert {"mountPath": "/data", "name": "data", "readOnly": True} in container["volumeMounts"]
    assert manifests["hpa.yaml"]["spec"]["scaleTargetRef"]["name"] == "cachegraph"
    assert manifests["service.yaml"]["spec"]["selector"] == {"app": "cachegraph"}


def test_kubernetes_puts_the_tested_nginx_cache_before_the_replicas():
    """The ConfigMap's nginx configuration is the compose file's (which the nginx tests run)
    but for its upstream: the replicas' Service."""
    config = yaml.safe_load((DOCKER / "k8s" / "nginx-config.yaml").read_text())
    served = config["data"]["default.conf"]
    tested = (DOCKER / "nginx" / "cachegraph.conf").read_text().split("\n\n", 1)[1]
    service = yaml.safe_load((DOCKER / "k8s" / "service.yaml").read_text())
    port = service["spec"]["ports"][0]["port"]
    upstream = re.compile(r"^    # .*\n    server (\S+) (.*);$", re.M)
    assert upstream.sub(r"\2", served) == upstream.sub(r"\2", tested)
    assert upstream.search(served).group(1) == f"{service['metadata']['name']}:{port}"
    assert "proxy_cache cachegraph;" in served and "proxy_cache_revalidate on;" in served
    nginx = yaml.safe_load((DOCKER / "k8s" / "nginx.yaml").read_text())
    pod = nginx["spec"]["template"]["spec"]
    assert pod["volumes"][0]["configMap"]["name"] == config["metadata"]["name"]
    front = yaml.safe_load((DOCKER / "k8s" / "nginx-service.yaml").read_text())
    assert front["spec"]["selector"] == nginx["spec"]["template"]["metadata"]["labels"]
