"""Evidence that travels: pointers published to git remotes (:mod:`.publish`),
other nodes found by name (:mod:`.nodes`, :mod:`.foreign`) and the SWHID form
of a file pointer (:mod:`.swhid`); docs/pointers.md."""
