"""The wac compiler: task sources in, validated task bundles out (see `pipeline.compile_project`)."""
