"""Gearbox device SDK (standard library only): an OpenAI-shaped client that asks the gateway
first, runs the device's small model through a ModelHandle (ollama, llama.cpp server) when told
to, reports its confidence and takes the gateway's cloud upgrade; one long-lived control channel
(SSE + POST) with heartbeats, reconnect and resume."""

from .errors import EngineError, GatewayUnreachableError, GearboxError
from .engines import LlamaCppServer, ModelHandle, Ollama, LocalAnswer
from .models import DeviceModels
from .channel import DeviceChannel
from .client import Gearbox

__all__ = [
    "Gearbox",
    "DeviceChannel",
    "DeviceModels",
    "ModelHandle",
    "LlamaCppServer",
    "Ollama",
    "LocalAnswer",
    "GearboxError",
    "GatewayUnreachableError",
    "EngineError",
]
