/* embedded_files.h — files compiled into the program (cmake/embed_files.cmake writes the tables). */
#ifndef T2_COMMON_EMBEDDED_FILES_H
#define T2_COMMON_EMBEDDED_FILES_H

#include <stddef.h>

typedef struct t2__embedded_file {
    const char *path; /* relative to the directory the table was made from */
    const char *type; /* Content-Type */
    const unsigned char *data; /* len bytes, then a NUL */
    size_t len;
} t2__embedded_file;

#endif
