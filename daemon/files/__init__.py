"""The files every command reads at its start: where the shipped configuration,
vocabularies and games live, installed or not (``resources``), and a YAML file read
back from what it parsed to before (``yamlcache``)."""
