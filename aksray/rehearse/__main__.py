"""`python -m aksray.rehearse`: the same command as `aksray rehearse`."""

from aksray.cli.main import entry

if __name__ == "__main__":
    entry()
