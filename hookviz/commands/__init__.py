"""The `hookviz` command line, one module per command, named as you type it.

Each module has ``add_parser(commands)``, which adds the command's parser to the `hookviz`
parser's subcommands, and ``run(args)``, which does the command and returns its exit code.
A module imports what its command needs inside ``run``: `hookviz --help` imports no torch.
cli.py lists them (COMMANDS); to add a command, write its module here and add it there.
"""
