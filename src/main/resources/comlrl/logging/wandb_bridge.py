"""CoMLRL's Weights & Biases bridge: one W&B run driven by JSON lines on stdin.

Started by comlrl.logging.WandbSink as a long-lived child process, so that W&B's own SDK (its
settings, modes, environment variables, service process and upload protocol) does the work.

Protocol (one JSON object per line):
  in : {"op": "init", "kwargs": {...wandb.init keyword arguments...}}
  out: {"op": "init", "ok": true, "identity": {"id", "project", "entity", "name"}, "dir": ...}
       or {"op": "init", "ok": false, "error": "..."}
  in : {"op": "log", "step": N, "data": {...}}          (no reply)
  in : {"op": "summary", "data": {...}}                 (no reply)
  in : {"op": "config", "data": {...}}                  (no reply)
  in : {"op": "finish", "exit_code": 0}
  out: {"op": "finish", "ok": true}
  out: {"op": "error", "message": "..."}                (any time a call fails; the bridge goes on)
The bridge prints nothing else on stdout; W&B's own messages go to stderr.
"""
import json
import sys


def main():
    out = sys.stdout
    sys.stdout = sys.stderr  # anything W&B prints goes to stderr; the protocol keeps stdout
    def reply(message):
        out.write(json.dumps(message) + "\n")
        out.flush()

    try:
        import wandb
    except Exception as e:  # noqa: BLE001 - any import failure is reported the same way
        reply({"op": "init", "ok": False, "error": "cannot import wandb (%s: %s); install the W&B SDK for the "
               "Python this bridge runs with: pip install wandb" % (type(e).__name__, e)})
        return 3
    run = None
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            message = json.loads(line)
        except ValueError as e:
            reply({"op": "error", "message": "bad protocol line: %s" % e})
            continue
        op = message.get("op")
        try:
            if op == "init":
                run = wandb.init(**message.get("kwargs", {}))
                reply({"op": "init", "ok": True, "dir": run.dir,
                       "identity": {"id": run.id, "project": run.project, "entity": run.entity, "name": run.name}})
            elif op == "log":
                run.log(message.get("data", {}), step=int(message["step"]))
            elif op == "summary":
                for key, value in message.get("data", {}).items():
                    run.summary[key] = value
            elif op == "config":
                run.config.update(message.get("data", {}), allow_val_change=True)
            elif op == "finish":
                if run is not None:
                    run.finish(exit_code=int(message.get("exit_code", 0)))
                reply({"op": "finish", "ok": True})
                return 0
            else:
                reply({"op": "error", "message": "unknown op %r" % (op,)})
        except Exception as e:  # noqa: BLE001 - reported to the trainer, which goes on without W&B
            if op == "init":
                reply({"op": "init", "ok": False, "error": "%s: %s" % (type(e).__name__, e)})
                return 1
            reply({"op": "error", "message": "%s failed: %s: %s" % (op, type(e).__name__, e)})
    # stdin closed without finish (the trainer died): end the run as failed
    if run is not None:
        run.finish(exit_code=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
