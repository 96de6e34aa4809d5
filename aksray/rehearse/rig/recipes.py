"""`python -m aksray.rehearse.rig.recipes`: how scripts/rig/build.sh builds each controller.

One tab-separated line per controller (aksray/rehearse/rig/controllers/), in start order: its
piece, Go module, version, stamp, `binary=package` pairs, ldflags and `data=source` pairs, the
versions read from scripts/rig/versions.env; a controller with a previous version pinned
(`<NAME>_PREVIOUS_VERSION`) gets a second line right after, piece `<piece>-<version>`, that
builds it beside the current one (bin/<binary>-<version>, data/<top>-<version>/).
"""

from __future__ import annotations

from aksray.rehearse.rig.controllers import controllers
from aksray.rehearse.rig.toolchain import RIG_SCRIPTS, read_env_file


def recipes() -> list[str]:
    versions = read_env_file(RIG_SCRIPTS / "versions.env")
    lines = []
    for controller in controllers():
        lines.append(controller.BUILD.recipe(versions))
        previous = controller.BUILD.previous_recipe(versions)
        if previous is not None:
            lines.append(previous)
    return lines


if __name__ == "__main__":
    print("\n".join(recipes()))
