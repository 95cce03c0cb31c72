"""The base class of the port's pipelines: from_pretrained reads pipeline.json and, for each
model key, calls pixal3d.models.from_pretrained(f"{path}/{v}"), looked up at call time (an
attribute of the module, not a name bound at import)."""
import json

from pixal3d import models as _models


class Pipeline:
    def __init__(self, models):
        self.models = models

    @classmethod
    def from_pretrained(cls, path, config_file="pipeline.json"):
        with open("%s/%s" % (path, config_file)) as f:
            args = json.load(f)
        loaded = {}
        for k, v in args["models"].items():
            loaded[k] = _models.from_pretrained(f"{path}/{v}")
        return cls(loaded)
