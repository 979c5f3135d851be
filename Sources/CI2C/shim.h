#ifndef BEARING_CI2C_SHIM_H
#define BEARING_CI2C_SHIM_H

/* libi2c (Debian libi2c-dev 4.3) and the i2c-dev ioctls. The i2c_smbus_* calls return -errno on
 * failure; the ioctl wrappers below return -errno too, so Swift handles both the same way. */
#include <linux/i2c-dev.h>
#include <linux/i2c.h>
#include <i2c/smbus.h>
#include <sys/ioctl.h>
#include <errno.h>

/* I2C_SLAVE, never I2C_SLAVE_FORCE: EBUSY then means a kernel driver owns the address. */
static inline int bearing_i2c_select(int fd, int address) {
    return ioctl(fd, I2C_SLAVE, address) < 0 ? -errno : 0;
}

static inline int bearing_i2c_funcs(int fd, unsigned long *funcs) {
    return ioctl(fd, I2C_FUNCS, funcs) < 0 ? -errno : 0;
}

static const unsigned long bearing_i2c_func_quick = I2C_FUNC_SMBUS_QUICK;
static const unsigned long bearing_i2c_func_read_byte = I2C_FUNC_SMBUS_READ_BYTE;
static const unsigned long bearing_i2c_func_byte_data = I2C_FUNC_SMBUS_BYTE_DATA;
static const unsigned long bearing_i2c_func_i2c_block = I2C_FUNC_SMBUS_I2C_BLOCK;
static const int bearing_i2c_block_max = I2C_SMBUS_BLOCK_MAX;

#endif
