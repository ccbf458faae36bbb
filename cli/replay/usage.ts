/** `gearbox replay --help`. Loaded alone, so help starts fast. */
export const REPLAY_USAGE = `usage: gearbox replay <traffic file> --target <url | grpc://host:port> [options]

Sends recorded traffic through a running Gearbox and writes one JSON line per request (route,
reason, cache, status, latency, TTFT, tokens, cost, fallback) for 'gearbox report'.
Traffic file (JSONL, plain or gzip), one request per line, any of:
  {"model":"gpt-4o-mini","messages":[...]}                    an OpenAI chat request body
  {"body":{...},"tenant":"acme","headers":{...},"timestamp":"2025-06-01T10:00:00Z"}   wrapped
  {"conversations":[{"from":"human","value":"..."},{"from":"gpt","value":"..."}]}     ShareGPT
  Anthropic Messages bodies with --format anthropic (or "endpoint":"/v1/messages" when wrapped)
Malformed lines are reported with their line number, counted and skipped.
target:
  --target http://127.0.0.1:8080     the front door (any OpenAI-compatible base URL)
  --target grpc://127.0.0.1:50051    the ext_proc service, driven the way Envoy drives it; then
    --cluster <name>=<url>           where Envoy's cluster <name> (x-gearbox-upstream) goes (repeat)
    --upstream <url>                 the default cluster: where untouched (shadowed) requests go
    --shadow                         Envoy's observability mode: Gearbox decides and records, the
                                     request goes on unchanged (its decision is in Gearbox's log)
pace (one of):
  --concurrency <n>                  requests in flight (default 8)
  --rate <r>                         requests per second (in flight still capped by --concurrency)
  --timing [--speed <x>]             the file's own timestamps, <x> times faster (default 1)
options:
  --out <file>                       output JSONL (default <traffic file>.replay.jsonl)
  --resume                           continue a stopped run: lines already in --out are skipped
  --limit <n>                        send at most <n> requests in this run
  --format openai|anthropic          bare bodies' API (default openai)
  --model <name>                     model for lines without one (ShareGPT; default gpt-4o-mini)
  --key <key> | --key <tenant>=<key> call key sent as a bearer token (per tenant: repeat)
  --timeout <ms>                     per request (default 120000)
Progress (rate, ETA, errors) on stderr; plain lines when stderr is not a terminal. Ctrl-C stops
sending, waits for the requests in flight, keeps what was done (exit 130; --resume continues).
example:
  gearbox replay traffic.jsonl --target http://127.0.0.1:8080 --rate 20 --limit 1000
  gearbox report traffic.jsonl.replay.jsonl --out report/
`;
