#!/usr/bin/env bash
exec bash "$(dirname "$0")/equiv_suite.sh" nccl
