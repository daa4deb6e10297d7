/* gzwrite.c — writes a byte buffer as a single-member gzip file through libarchive (raw format +
 * gzip filter). Internal: the tests use it to produce compressed IDX files without zlib. */
#include <archive.h>
#include <archive_entry.h>
#include "data_internal.h"

int t2__gzip_write_file(const char *path, const void *data, size_t len)
{
    int rc = T2_OK;
    struct archive *a = archive_write_new();
    struct archive_entry *e = archive_entry_new();
    if (!a || !e) {
        rc = t2_seterr(T2_ENOMEM, "%s: cannot create a libarchive writer", path);
        goto done;
    }
    archive_entry_set_pathname(e, "data");
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_perm(e, 0644);
    archive_entry_set_size(e, (la_int64_t)len);
    if (archive_write_add_filter_gzip(a) != ARCHIVE_OK || archive_write_set_format_raw(a) != ARCHIVE_OK ||
        archive_write_open_filename(a, path) != ARCHIVE_OK || archive_write_header(a, e) != ARCHIVE_OK ||
        (len > 0 && archive_write_data(a, data, len) != (la_ssize_t)len) || archive_write_close(a) != ARCHIVE_OK)
        rc = t2_seterr(T2_EIO, "%s: cannot write gzip: %s", path,
                       archive_error_string(a) ? archive_error_string(a) : "unknown error");
done:
    archive_entry_free(e);
    archive_write_free(a);
    return rc;
}
