/* Data-in / data-out buffer helpers over the command's iovec (src/util/iov.c). */
#include "vaaid/iov.h"
#include "vaaid/scsi.h"

size_t scsi_copy_to_data_in(struct scsi_cmd *cmd, const void *buf, size_t len)
{
	if (len > cmd->iov_len)
		len = cmd->iov_len;
	size_t n = iov_copy_to(cmd->iov, cmd->iovcnt, 0, buf, len);
	cmd->data_in_len = n;
	/*
	 * TCMU cannot report a read length of 0 (the kernel then returns the
	 * whole buffer) and a ring buffer holds whatever the previous command
	 * left there: never let those bytes reach the initiator. The buffers of
	 * emulated commands are small (at most the allocation length).
	 */
	if (n < cmd->iov_len)
		iov_memset(cmd->iov, cmd->iovcnt, n, 0, cmd->iov_len - n);
	return n;
}

void scsi_clear_data_in(struct scsi_cmd *cmd)
{
	static const uint8_t none;
	scsi_copy_to_data_in(cmd, &none, 0);
}

size_t scsi_copy_from_data_out(const struct scsi_cmd *cmd, size_t off, void *buf, size_t len)
{
	if (off >= cmd->iov_len)
		return 0;
	if (len > cmd->iov_len - off)
		len = cmd->iov_len - off;
	return iov_copy_from(cmd->iov, cmd->iovcnt, off, buf, len);
}
