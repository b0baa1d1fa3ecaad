"""Scrapes toolshelf's `/metrics` and reads it with the Prometheus Python client's OpenMetrics
parser (a real consumer of the format, not a regex).

Usage: metrics_scrape.py URL TOKEN. Prints {"status", "content_type", "samples": [[name,
labels, value], ...]} as JSON; a refused scrape has no samples.
"""

import json
import sys
import urllib.error
import urllib.request

from prometheus_client.openmetrics.parser import text_string_to_metric_families


def main(url: str, token: str) -> dict:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read().decode()
            status, content_type = response.status, response.headers.get("content-type")
    except urllib.error.HTTPError as error:
        return {"status": error.code, "content_type": error.headers.get("content-type"), "samples": []}
    samples = [
        [sample.name, sample.labels, sample.value]
        for family in text_string_to_metric_families(body)
        for sample in family.samples
    ]
    return {"status": status, "content_type": content_type, "samples": samples}


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:3])))
