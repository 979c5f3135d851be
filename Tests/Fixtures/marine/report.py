"""What both checkers share: writing the --report JSON."""
import json
import sys


def write_report(path, report, prog):
    """Writes `report` as sorted, indented JSON to `path`; False (with a message) when it cannot."""
    try:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(report, fh, indent=2, sort_keys=True)
            fh.write("\n")
    except OSError as e:
        print("%s: error: cannot write report: %s" % (prog, e), file=sys.stderr)
        return False
    return True
