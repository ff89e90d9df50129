"""The FUSE door: a thin pyfuse3 layer over :mod:`nasfs.service`."""
