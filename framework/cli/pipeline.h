/* pipeline.h — the pipeline commands of the CLI (internal; main.c dispatches to them). */
#ifndef T2_CLI_PIPELINE_H
#define T2_CLI_PIPELINE_H

/* `t2exp pipeline run|status ...` and `t2exp pipelines [describe ID]`; argv starts after the
 * command word. Return the process exit code: 0 ok, 1 a stage failed, 2 usage or a bad flow
 * file, 3 store or I/O trouble, 130 stopped by SIGINT/SIGTERM. */
int t2__cli_pipeline(int argc, char **argv, const char *home);
int t2__cli_pipelines(int argc, char **argv, const char *home);

extern const char t2__cli_pipeline_usage[];

#endif
