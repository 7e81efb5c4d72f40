/*
 * One JSON object per command:
 * {"lun":0,"status":2,"sense_key":5,"asc":36,"ascq":0,"info":null,
 *  "sense_hex":"70...","in_len":0,"in_hex":"","in_sha256":"..."}
 * sense fields are decoded from fixed-format sense (SPC-4 4.5.3; descriptor
 * format 72h/73h decoded too); info is the INFORMATION field when VALID=1.
 */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_output.h"
#include "vaaid/sha256.h"

static char *hex(const uint8_t *b, size_t n)
{
	char *s = malloc(2 * n + 1);
	if (!s)
		return NULL;
	for (size_t i = 0; i < n; i++)
		snprintf(s + 2 * i, 3, "%02x", b[i]);
	s[2 * n] = 0;
	return s;
}

void print_cmd_result(FILE *f, const struct simhost_result *r)
{
	const struct simk_result *k = &r->r;
	int key = 0, asc = 0, ascq = 0;
	json_object *info = NULL;
	if (k->status && k->sense_len >= 14) {
		const uint8_t *sn = k->sense;
		uint8_t rc = sn[0] & 0x7f;
		if (rc == 0x70 || rc == 0x71) {
			key = sn[2] & 0x0f;
			asc = sn[12];
			ascq = sn[13];
			if (sn[0] & 0x80)
				info = json_object_new_uint64((uint64_t)sn[3] << 24 | (uint64_t)sn[4] << 16 |
							      (uint64_t)sn[5] << 8 | sn[6]);
		} else if (rc == 0x72 || rc == 0x73) {
			key = sn[1] & 0x0f;
			asc = sn[2];
			ascq = sn[3];
		}
	}
	json_object *o = json_object_new_object();
	json_object_object_add(o, "lun", json_object_new_int(r->lun));
	json_object_object_add(o, "status", json_object_new_int(k->status));
	json_object_object_add(o, "sense_key", json_object_new_int(key));
	json_object_object_add(o, "asc", json_object_new_int(asc));
	json_object_object_add(o, "ascq", json_object_new_int(ascq));
	json_object_object_add(o, "info", info);
	char *sh = hex(k->sense, k->status ? k->sense_len : 0);
	json_object_object_add(o, "sense_hex", json_object_new_string(sh ? sh : ""));
	free(sh);
	json_object_object_add(o, "in_len", json_object_new_uint64(k->data_in_len));
	char *ih = hex(k->data_in ? k->data_in : (const uint8_t *)"", k->data_in_len < 64 ? k->data_in_len : 64);
	json_object_object_add(o, "in_hex", json_object_new_string(ih ? ih : ""));
	free(ih);
	char digest[65];
	sha256_hex(k->data_in ? k->data_in : (const uint8_t *)"", k->data_in_len, digest);
	json_object_object_add(o, "in_sha256", json_object_new_string(digest));
	fprintf(f, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
}
