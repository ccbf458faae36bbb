"""The models a device holds and the active one, changed by the gateway's commands (load,
unload, switch). `factory(command)` makes a handle for a model the device does not hold yet."""
from .engines import LlamaCppServer, Ollama


def default_factory(command):
    engine, source = command.get("engine"), command.get("source")
    if engine == "ollama":
        return Ollama(command["model"], host=source or "http://127.0.0.1:11434")
    if engine == "llama.cpp":
        if not source:
            raise ValueError("load %s: a source (the llama.cpp server's URL) is required" % command["model"])
        return LlamaCppServer(command["model"], base_url=source)
    raise ValueError("load %s: engine must be llama.cpp or ollama, got %r" % (command["model"], engine))


class DeviceModels:
    def __init__(self, handles=(), factory=default_factory):
        self.handles = {h.id: h for h in handles}
        self.active_id = next(iter(self.handles), None)
        self.factory = factory

    @property
    def active(self):
        return self.handles.get(self.active_id) if self.active_id else None

    def get(self, model):
        return self.handles.get(model)

    def engines(self):
        return ["llama.cpp", "ollama"]

    def listed(self):
        return [h.spec() for h in self.handles.values() if h.loaded]

    def load_all(self):
        for h in self.handles.values():
            h.load()

    def apply(self, c):
        op, model = c.get("op"), c.get("model")
        if op == "load":
            h = self.handles.get(model)
            if h is None:
                h = self.factory(c)
                self.handles[model] = h
            h.load()
            if self.active_id is None:
                self.active_id = model
        elif op == "unload":
            h = self.handles.pop(model, None)
            if h is None:
                raise ValueError("unload %s: not held" % model)
            h.unload()
            if self.active_id == model:
                self.active_id = next(iter(self.handles), None)
        elif op == "switch":
            h = self.handles.get(model)
            if h is None:
                raise ValueError("switch %s: not held (load it first)" % model)
            h.load()
            self.active_id = model
        else:
            raise ValueError("unknown command op %r" % op)
